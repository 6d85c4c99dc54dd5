-- Health of MCP servers (spec §2.3 `health`) and the schedule of periodic health checks and re-discovery.
-- health_status_since changes only on a transition; health_error_class is one of discovery's error classes; the
-- message is the platform's own short text (never the upstream's words or a header value).
ALTER TABLE catalog.mcp_servers ADD COLUMN health_status text NOT NULL DEFAULT 'unknown'
  CHECK (health_status IN ('unknown', 'healthy', 'unhealthy'));
ALTER TABLE catalog.mcp_servers ADD COLUMN health_checked_at timestamptz;
ALTER TABLE catalog.mcp_servers ADD COLUMN health_status_since timestamptz;
ALTER TABLE catalog.mcp_servers ADD COLUMN health_latency_ms integer;
ALTER TABLE catalog.mcp_servers ADD COLUMN health_error_class text;
ALTER TABLE catalog.mcp_servers ADD COLUMN health_sign_in_required boolean NOT NULL DEFAULT false;
ALTER TABLE catalog.mcp_servers ADD COLUMN health_message text;

-- When a checker may next claim the server. New servers are due at once; a claim moves the time forward by one
-- interval in the claiming statement, so replicas claiming with SKIP LOCKED never take the same server twice.
ALTER TABLE catalog.mcp_servers ADD COLUMN next_health_check_at timestamptz NOT NULL DEFAULT now();
-- NULL until the scheduler first sees the server (it then schedules it one interval later: a new server is
-- discovered when its owner asks, not behind their back the moment it is registered).
ALTER TABLE catalog.mcp_servers ADD COLUMN next_refresh_at timestamptz;

-- One discovery of a server at a time across replicas: a lease taken before discovery, and a flag asking the
-- lease holder to discover once more (a refresh requested while one was running).
ALTER TABLE catalog.mcp_servers ADD COLUMN refresh_lease_until timestamptz;
ALTER TABLE catalog.mcp_servers ADD COLUMN refresh_again boolean NOT NULL DEFAULT false;

-- The "due" queries: enabled servers in order of their next time.
CREATE INDEX mcp_servers_health_due ON catalog.mcp_servers (next_health_check_at) WHERE enabled;
CREATE INDEX mcp_servers_refresh_due ON catalog.mcp_servers (next_refresh_at) WHERE enabled;
