-- One row per request made through a gateway (spec §2.9), stored from the mcp-calls.v1 topic. team_id, the
-- principal's ids and the gateway and server ids are kept as they were at the call; whether the gateway, server and
-- service account still exist is decided when a record is read. event_id makes storing idempotent.
CREATE TABLE catalog.call_records (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id uuid NOT NULL UNIQUE,
  team_id uuid NOT NULL,
  occurred_at timestamptz NOT NULL,
  method text NOT NULL,
  exposed_name text NOT NULL DEFAULT '',
  gateway_id uuid NOT NULL,
  gateway_slug text NOT NULL,
  gateway_name text NOT NULL,
  -- Null when the request never reached an upstream (a refused name, tools/list, ...).
  server_id uuid,
  server_slug text NOT NULL DEFAULT '',
  server_name text NOT NULL DEFAULT '',
  principal jsonb NOT NULL,
  -- The person behind the call (principal.userId), a column of its own for the user filter.
  principal_user_id uuid,
  client_name text NOT NULL DEFAULT '',
  outcome text NOT NULL,
  error_class text NOT NULL DEFAULT '',
  provider_slug text NOT NULL DEFAULT '',
  latency_ms integer NOT NULL CHECK (latency_ms >= 0),
  request_bytes bigint NOT NULL CHECK (request_bytes >= 0),
  response_bytes bigint NOT NULL CHECK (response_bytes >= 0),
  request_id text NOT NULL DEFAULT '',
  -- Payloads only when the server captured them, each capped by the edge (request/response_truncated say so).
  captured boolean NOT NULL DEFAULT false,
  request_payload text,
  response_payload text,
  request_truncated boolean NOT NULL DEFAULT false,
  response_truncated boolean NOT NULL DEFAULT false
);

-- A team's records newest first (the list and its cursor), and the same for each id filter.
CREATE INDEX call_records_team ON catalog.call_records (team_id, id DESC);
CREATE INDEX call_records_team_gateway ON catalog.call_records (team_id, gateway_id, id DESC);
CREATE INDEX call_records_team_server ON catalog.call_records (team_id, server_id, id DESC) WHERE server_id IS NOT NULL;
CREATE INDEX call_records_team_user ON catalog.call_records (team_id, principal_user_id, id DESC) WHERE principal_user_id IS NOT NULL;
-- Time windows (since/until); outcome and method are few-valued and filter the rows these indexes find.
CREATE INDEX call_records_team_time ON catalog.call_records (team_id, occurred_at);
