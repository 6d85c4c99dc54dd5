-- Publishing (spec §3, op 2): draft → pending (a request awaiting a platform admin's review) → published or
-- rejected. The request's time and note, and the last review's time, reviewer (id and name as they were then) and
-- note, are kept on the server. publish_reviewed_by is identity's person id; no foreign key crosses schemas.
ALTER TABLE catalog.mcp_servers ADD CONSTRAINT mcp_servers_publish_state CHECK (publish_state IN ('draft', 'pending', 'published', 'rejected'));
ALTER TABLE catalog.mcp_servers ADD COLUMN publish_requested_at timestamptz;
ALTER TABLE catalog.mcp_servers ADD COLUMN publish_request_note text;
ALTER TABLE catalog.mcp_servers ADD COLUMN publish_reviewed_at timestamptz;
ALTER TABLE catalog.mcp_servers ADD COLUMN publish_reviewed_by uuid;
ALTER TABLE catalog.mcp_servers ADD COLUMN publish_reviewed_by_name text;
ALTER TABLE catalog.mcp_servers ADD COLUMN publish_review_note text;

-- Pending publication requests, oldest first, for the platform admins' attention list.
CREATE INDEX mcp_servers_pending ON catalog.mcp_servers (publish_requested_at) WHERE publish_state = 'pending';

-- Who approved a capability, by name as it was then (approved_by holds the person id).
ALTER TABLE catalog.capabilities ADD COLUMN approved_by_name text;
