-- MCP servers: a team's registered upstream servers. team_id and created_by are identity's ids; no foreign key
-- crosses into another service's schema. The upstream credential is stored only sealed (AES-256-GCM, the row id as
-- associated data) with its last 4 characters as a hint.
CREATE TABLE catalog.mcp_servers (
  id uuid PRIMARY KEY,
  team_id uuid NOT NULL,
  slug text NOT NULL,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  url text NOT NULL,
  transport text NOT NULL DEFAULT 'streamable-http' CHECK (transport IN ('streamable-http', 'sse')),
  auth_header_name text,
  auth_value_sealed text,
  auth_value_hint text,
  timeout_seconds integer NOT NULL DEFAULT 30 CHECK (timeout_seconds BETWEEN 1 AND 300),
  enabled boolean NOT NULL DEFAULT true,
  send_identity boolean NOT NULL DEFAULT false,
  capture_payloads boolean NOT NULL DEFAULT false,
  publish_state text NOT NULL DEFAULT 'draft',
  revision bigint NOT NULL DEFAULT 1,
  created_by uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- Slugs are unique within a team; the index also serves the team's list in slug order.
  CONSTRAINT mcp_servers_team_slug UNIQUE (team_id, slug)
);
