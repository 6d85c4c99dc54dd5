-- The servers a gateway fronts, in order (position), each under its prefix: exposed tool and prompt names are
-- `{prefix}__{name}` (the bare name when the prefix is empty). A deleted gateway or server leaves no rows behind.
CREATE TABLE catalog.gateway_servers (
  gateway_id uuid NOT NULL REFERENCES catalog.gateways (id) ON DELETE CASCADE,
  server_id uuid NOT NULL REFERENCES catalog.mcp_servers (id) ON DELETE CASCADE,
  prefix text NOT NULL,
  position integer NOT NULL,
  PRIMARY KEY (gateway_id, server_id)
);

-- A deleted server's gateways are found (and their edges told) through this index.
CREATE INDEX gateway_servers_server ON catalog.gateway_servers (server_id);
