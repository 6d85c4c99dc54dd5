-- A team's call records of one outcome, newest first: the outcome filter (errors, refusals, timeouts: what one looks
-- for when something goes wrong) matches few of a team's rows, and without this index a page of them walked every
-- team's newest records until it found enough (seconds at millions of rows, a scan when none match).
CREATE INDEX call_records_team_outcome ON catalog.call_records (team_id, outcome, id DESC);
-- The admin list of every server (op 16's view) pages by (slug, id): without it each page sorted the whole table.
CREATE INDEX mcp_servers_slug_id ON catalog.mcp_servers (slug, id);
