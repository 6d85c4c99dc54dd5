-- Whether the last health event written for the server was server.unhealthy. Health events follow what was
-- announced rather than the stored status, which a change of the server's connection resets to 'unknown' without an
-- event: a server announced down and found healthy after its credential was fixed must still get its server.healthy.
ALTER TABLE catalog.mcp_servers ADD COLUMN health_down_announced boolean NOT NULL DEFAULT false;
UPDATE catalog.mcp_servers SET health_down_announced = true WHERE health_status = 'unhealthy';
