-- The OAuth 2.1 authorization server for MCP gateways (§4.1, §5.5): registered clients, the trusted-client list,
-- remembered consents, authorization codes, connections (one per person + client + grant) and their tokens.
-- Codes and tokens are stored only as HMAC-SHA256 digests under API_KEY_PEPPER (the `digest` columns).
-- Gateways belong to the catalog service: gateway ids and slugs are copied here as given, without foreign keys.

-- Dynamic client registrations (RFC 7591), public clients only. Client ID metadata document clients are not
-- stored: they are fetched and cached in process.
CREATE TABLE identity.oauth_clients (
  id             text PRIMARY KEY CHECK (id LIKE 'svccl\_%'),
  client_name    text NOT NULL DEFAULT '',
  client_uri     text NOT NULL DEFAULT '',
  logo_uri       text NOT NULL DEFAULT '',
  redirect_uris  text[] NOT NULL,
  grant_types    text[] NOT NULL,
  response_types text[] NOT NULL,
  registered_at  timestamptz NOT NULL DEFAULT now(),
  last_used_at   timestamptz,
  -- registered_at + 30 days until a code is first issued to the client; NULL (never) from then on.
  expires_at     timestamptz
);
CREATE INDEX oauth_clients_expiry ON identity.oauth_clients (expires_at) WHERE expires_at IS NOT NULL;

-- Client metadata document URLs whose clients skip the consent page (platform admins' list).
CREATE TABLE identity.oauth_trusted_clients (
  client_id text PRIMARY KEY,
  added_at  timestamptz NOT NULL DEFAULT now()
);

-- Consent remembered per person, client and gateway.
CREATE TABLE identity.oauth_consents (
  person_id  uuid NOT NULL REFERENCES identity.people (id) ON DELETE CASCADE,
  client_id  text NOT NULL,
  gateway_id uuid NOT NULL,
  granted_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (person_id, client_id, gateway_id)
);

-- A grant: what one person allowed one client to do at one gateway. Revoking it ends all its tokens.
CREATE TABLE identity.oauth_connections (
  id                 uuid PRIMARY KEY,
  person_id          uuid NOT NULL REFERENCES identity.people (id) ON DELETE CASCADE,
  client_id          text NOT NULL,
  client_name        text NOT NULL,
  client_verified    boolean NOT NULL,
  gateway_id         uuid NOT NULL,
  gateway_slug       text NOT NULL,
  resource           text NOT NULL,
  -- The newest refresh-token generation issued; only generation refresh_generation - 1 gets the replay grace.
  refresh_generation integer NOT NULL DEFAULT 1,
  created_at         timestamptz NOT NULL DEFAULT now(),
  last_used_at       timestamptz,
  revoked_at         timestamptz
);
CREATE INDEX oauth_connections_person ON identity.oauth_connections (person_id, created_at DESC, id DESC) WHERE revoked_at IS NULL;

-- Authorization codes: 60 seconds, single use; kept a day after expiry so that a replay can still be recognised.
CREATE TABLE identity.oauth_codes (
  digest          text PRIMARY KEY,
  client_id       text NOT NULL,
  client_name     text NOT NULL,
  client_verified boolean NOT NULL,
  redirect_uri    text NOT NULL,
  code_challenge  text NOT NULL,
  resource        text NOT NULL,
  gateway_id      uuid NOT NULL,
  gateway_slug    text NOT NULL,
  person_id       uuid NOT NULL REFERENCES identity.people (id) ON DELETE CASCADE,
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  used_at         timestamptz,
  -- The connection the code's exchange created (what a second use revokes).
  connection_id   uuid
);
CREATE INDEX oauth_codes_expiry ON identity.oauth_codes (expires_at);

-- Access (`svcat_`) and refresh (`svcrt_`) tokens of a connection.
CREATE TABLE identity.oauth_tokens (
  digest        text PRIMARY KEY,
  connection_id uuid NOT NULL REFERENCES identity.oauth_connections (id) ON DELETE CASCADE,
  kind          text NOT NULL CHECK (kind IN ('access', 'refresh')),
  -- The refresh generation the token belongs to (1 for the pair of the code exchange, +1 at every rotation).
  generation    integer NOT NULL,
  expires_at    timestamptz NOT NULL,
  -- Refresh tokens only: when it was exchanged for a new pair (it retires then).
  rotated_at    timestamptz,
  revoked_at    timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_tokens_connection ON identity.oauth_tokens (connection_id);
CREATE INDEX oauth_tokens_expiry ON identity.oauth_tokens (expires_at);
