-- People, teams, memberships, sessions, API keys, service accounts, the audit log and maintenance mode.
-- Identifiers are UUIDs except API key ids (the public `<id>` of `rag_<id>_<secret>`) and audit entry ids (int64).

CREATE TABLE identity.people (
  id              uuid PRIMARY KEY,
  email           text NOT NULL,
  display_name    text NOT NULL,
  -- scrypt hash in PHC-like form; NULL when the person cannot sign in with a password.
  password_hash   text,
  status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  platform_role   text CHECK (platform_role IN ('admin', 'auditor', 'staff')),
  last_sign_in_at timestamptz,
  revision        bigint NOT NULL DEFAULT 1,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
-- Emails are compared case-insensitively.
CREATE UNIQUE INDEX people_email_key ON identity.people (lower(email));

CREATE TABLE identity.teams (
  id                uuid PRIMARY KEY,
  slug              text NOT NULL UNIQUE,
  name              text NOT NULL,
  kind              text NOT NULL CHECK (kind IN ('team', 'personal', 'platform')),
  personal_owner_id uuid UNIQUE REFERENCES identity.people (id),
  archived_at       timestamptz,
  revision          bigint NOT NULL DEFAULT 1,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'personal') = (personal_owner_id IS NOT NULL))
);
-- The one platform-owned team holding platform-level resources.
CREATE UNIQUE INDEX teams_one_platform ON identity.teams (kind) WHERE kind = 'platform';

CREATE TABLE identity.memberships (
  team_id    uuid NOT NULL REFERENCES identity.teams (id) ON DELETE CASCADE,
  person_id  uuid NOT NULL REFERENCES identity.people (id) ON DELETE CASCADE,
  role       text NOT NULL CHECK (role IN ('owner', 'admin', 'editor', 'member')),
  revision   bigint NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (team_id, person_id)
);
CREATE INDEX memberships_person ON identity.memberships (person_id);

CREATE TABLE identity.sessions (
  id           uuid PRIMARY KEY,
  -- HMAC-SHA256 of the cookie value under API_KEY_PEPPER; the value itself is never stored.
  token_digest text NOT NULL UNIQUE,
  person_id    uuid NOT NULL REFERENCES identity.people (id) ON DELETE CASCADE,
  client_ip    text,
  user_agent   text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  ended_at     timestamptz
);
CREATE INDEX sessions_person ON identity.sessions (person_id) WHERE ended_at IS NULL;

CREATE TABLE identity.service_accounts (
  id           uuid PRIMARY KEY,
  team_id      uuid NOT NULL REFERENCES identity.teams (id) ON DELETE CASCADE,
  name         text NOT NULL,
  description  text NOT NULL DEFAULT '',
  role         text NOT NULL CHECK (role IN ('member', 'editor')),
  enabled      boolean NOT NULL DEFAULT true,
  created_by   uuid REFERENCES identity.people (id) ON DELETE SET NULL,
  last_used_at timestamptz,
  revision     bigint NOT NULL DEFAULT 1,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (team_id, name)
);

CREATE TABLE identity.api_keys (
  id                 text PRIMARY KEY,
  team_id            uuid NOT NULL REFERENCES identity.teams (id) ON DELETE CASCADE,
  kind               text NOT NULL CHECK (kind IN ('personal', 'service')),
  -- Personal keys act as this person.
  person_id          uuid REFERENCES identity.people (id) ON DELETE CASCADE,
  -- Service keys of a service account act as it; other service keys act as the team.
  service_account_id uuid REFERENCES identity.service_accounts (id) ON DELETE CASCADE,
  name               text NOT NULL,
  scopes             text[] NOT NULL,
  knowledge_base_ids uuid[] NOT NULL DEFAULT '{}',
  agent_ids          uuid[] NOT NULL DEFAULT '{}',
  -- HMAC-SHA256 of the whole key under API_KEY_PEPPER.
  secret_digest      text NOT NULL,
  hint               text NOT NULL,
  expires_at         timestamptz,
  revoked_at         timestamptz,
  last_used_at       timestamptz,
  created_by         uuid REFERENCES identity.people (id) ON DELETE SET NULL,
  created_at         timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'personal') = (person_id IS NOT NULL)),
  CHECK (kind = 'service' OR service_account_id IS NULL)
);
CREATE INDEX api_keys_team ON identity.api_keys (team_id, created_at);
CREATE INDEX api_keys_person ON identity.api_keys (person_id) WHERE person_id IS NOT NULL;
CREATE INDEX api_keys_service_account ON identity.api_keys (service_account_id) WHERE service_account_id IS NOT NULL;

-- Filled by the audit consumer from the audit.v1 topic (every service's audit events land here).
CREATE TABLE identity.audit_entries (
  id             bigserial PRIMARY KEY,
  event_id       uuid NOT NULL UNIQUE,
  occurred_at    timestamptz NOT NULL,
  team_id        uuid,
  action         text NOT NULL,
  actor_kind     text NOT NULL,
  actor_user_id  uuid,
  actor          jsonb NOT NULL,
  target_type    text NOT NULL DEFAULT '',
  target_id      text NOT NULL DEFAULT '',
  target_label   text NOT NULL DEFAULT '',
  target_exists  boolean NOT NULL DEFAULT true,
  parent         jsonb,
  before         jsonb,
  after          jsonb,
  metadata       jsonb NOT NULL DEFAULT '{}',
  request_id     text NOT NULL DEFAULT '',
  via            jsonb,
  client_ip      text NOT NULL DEFAULT ''
);
CREATE INDEX audit_entries_team ON identity.audit_entries (team_id, id DESC);
CREATE INDEX audit_entries_target ON identity.audit_entries (target_type, target_id);

CREATE TABLE identity.maintenance (
  id             int PRIMARY KEY CHECK (id = 1),
  enabled        boolean NOT NULL DEFAULT false,
  reason         text NOT NULL DEFAULT '',
  planned_end_at timestamptz,
  started_at     timestamptz,
  started_by     uuid REFERENCES identity.people (id) ON DELETE SET NULL,
  updated_by     uuid REFERENCES identity.people (id) ON DELETE SET NULL,
  updated_at     timestamptz NOT NULL DEFAULT now(),
  revision       bigint NOT NULL DEFAULT 1
);
INSERT INTO identity.maintenance (id) VALUES (1);

INSERT INTO identity.teams (id, slug, name, kind)
VALUES ('00000000-0000-4000-8000-000000000001', 'platform', 'Platform', 'platform');
