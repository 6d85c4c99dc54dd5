-- A server's capabilities are listed a page at a time by kind (tool, resource, resource_template, prompt), then
-- name, then id (store/capabilities-store.ts, listCapabilityPage). The kind's place is an expression, which the list
-- must spell exactly as it is here for the planner to use these indexes. Without them every page read and sorted
-- all of the server's capabilities (up to 10,000 present ones, and any number gone).
CREATE INDEX capabilities_server_list_order ON catalog.capabilities
  (server_id, (CASE kind WHEN 'tool' THEN 1 WHEN 'resource' THEN 2 WHEN 'resource_template' THEN 3 ELSE 4 END), name, id);
-- The list without gone capabilities (the default, and a refresh's answer) has its own: gone ones are kept for ever
-- (their approvals survive a flapping upstream), and a page of present ones must not walk past all of them.
CREATE INDEX capabilities_server_list_order_present ON catalog.capabilities
  (server_id, (CASE kind WHEN 'tool' THEN 1 WHEN 'resource' THEN 2 WHEN 'resource_template' THEN 3 ELSE 4 END), name, id)
  WHERE gone_at IS NULL;
