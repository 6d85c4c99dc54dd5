-- Gateways: a team's MCP endpoint at {APP_URL}/mcp/{slug}. team_id and created_by are identity's ids; no foreign
-- key crosses into another service's schema.
CREATE TABLE catalog.gateways (
  id uuid PRIMARY KEY,
  team_id uuid NOT NULL,
  slug text NOT NULL UNIQUE,
  name text NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  revision bigint NOT NULL DEFAULT 1,
  created_by uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- A team's gateways are listed in slug order.
CREATE INDEX gateways_team_slug ON catalog.gateways (team_id, slug);
