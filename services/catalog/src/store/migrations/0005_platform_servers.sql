-- Platform servers (owned by the platform team) and the platform admin view (spec §2.4, op 16). A team's own server
-- keeps the defaults: proxy access, offered to its own team only, not in personal workspaces.
ALTER TABLE catalog.mcp_servers ADD COLUMN access_mode text NOT NULL DEFAULT 'proxy' CHECK (access_mode IN ('proxy', 'direct'));
ALTER TABLE catalog.mcp_servers ADD COLUMN visibility text NOT NULL DEFAULT 'teams' CHECK (visibility IN ('all', 'teams'));
ALTER TABLE catalog.mcp_servers ADD COLUMN personal boolean NOT NULL DEFAULT false;
-- Further static upstream headers (the admin view's `headers`), sealed as one JSON object with the row id as
-- associated data. The team API's single credential header stays in auth_header_name / auth_value_sealed.
ALTER TABLE catalog.mcp_servers ADD COLUMN headers_sealed text;

-- The teams a platform server with visibility 'teams' is offered to (identity's team ids; no foreign key).
CREATE TABLE catalog.mcp_server_teams (
  server_id uuid NOT NULL REFERENCES catalog.mcp_servers (id) ON DELETE CASCADE,
  team_id uuid NOT NULL,
  PRIMARY KEY (server_id, team_id)
);
CREATE INDEX mcp_server_teams_team ON catalog.mcp_server_teams (team_id);
