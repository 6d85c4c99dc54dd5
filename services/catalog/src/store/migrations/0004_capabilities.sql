-- Capabilities discovered on MCP servers (tools, resources, resource templates, prompts). One row per name and kind
-- of a server, kept when the capability disappears upstream (gone_at) so that approvals survive a flapping upstream.
-- The fingerprint is the SHA-256 of the canonical definition; approval records the fingerprint that was approved.
CREATE TABLE catalog.capabilities (
  id uuid PRIMARY KEY,
  server_id uuid NOT NULL REFERENCES catalog.mcp_servers (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('tool', 'resource', 'resource_template', 'prompt')),
  name text NOT NULL,
  title text NOT NULL DEFAULT '',
  description text NOT NULL DEFAULT '',
  definition jsonb NOT NULL,
  fingerprint text NOT NULL,
  approved_fingerprint text,
  approved_at timestamptz,
  approved_by uuid,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  gone_at timestamptz,
  CONSTRAINT capabilities_server_kind_name UNIQUE (server_id, kind, name)
);

-- The outcome of the last discovery of a server: when it last succeeded, and the error class of the last failure
-- (cleared by the next success).
ALTER TABLE catalog.mcp_servers ADD COLUMN refreshed_at timestamptz;
ALTER TABLE catalog.mcp_servers ADD COLUMN last_refresh_error text;
