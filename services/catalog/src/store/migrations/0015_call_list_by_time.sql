-- The call list is ordered by time (occurred_at, then id), newest first, and every index it reads is led by the team
-- and ends with that order, so each filter, alone or with a time window (since/until) and the cursor, reads about a
-- page of rows. Ordered by id, no index could give a time window: a day 10 days back walked every newer record of the
-- team, and a method filter had no index (one no record has read the whole table). docs/performance.md, "Call records
-- list at 2 M rows".
CREATE INDEX call_records_team_at ON catalog.call_records (team_id, occurred_at DESC, id DESC);
CREATE INDEX call_records_gateway_at ON catalog.call_records (team_id, gateway_id, occurred_at DESC, id DESC);
CREATE INDEX call_records_server_at ON catalog.call_records (team_id, server_id, occurred_at DESC, id DESC) WHERE server_id IS NOT NULL;
CREATE INDEX call_records_user_at ON catalog.call_records (team_id, principal_user_id, occurred_at DESC, id DESC) WHERE principal_user_id IS NOT NULL;
CREATE INDEX call_records_method_at ON catalog.call_records (team_id, method, occurred_at DESC, id DESC);
-- Only the records one looks for when something went wrong: `ok` is most of them (a list of those walks the team's
-- index above, finding one nearly every row), and leaving them out spares nearly every insert this index. The other
-- filters' columns come last, so "this gateway's errors" is checked in the index: when the gateway has few of the
-- team's errors, the walk reads every error of the team: from the table 0.06-0.4 s at 2 M records, in the index 2 ms.
CREATE INDEX call_records_problem_at ON catalog.call_records (team_id, outcome, occurred_at DESC, id DESC, gateway_id, server_id, principal_user_id, method)
  WHERE outcome <> 'ok';
-- Retention's index, on an expression the list never sorts by. On occurred_at itself the planner walked it for a
-- team's list, every team's records newest first, keeping the team's: cheap while the team is busy, a walk through
-- every newer record of the installation once the team's calls stopped weeks ago.
CREATE INDEX call_records_expiry ON catalog.call_records ((occurred_at AT TIME ZONE 'UTC'));
-- A gateway, a server and a person each belong to one team, which the planner cannot know: it counted the team's
-- share twice over, so with two or three of them filtered together it expected a handful of matches where there were
-- thousands, and read every record of one of them to sort a page (0.1-0.3 s) rather than walk an index to the first
-- page (2 ms). Functional-dependency statistics tell it; they cost ANALYZE a little and inserts nothing.
CREATE STATISTICS catalog.call_records_id_dependencies (dependencies) ON team_id, gateway_id, server_id, principal_user_id FROM catalog.call_records;
-- The statistics stay empty until the table is next analysed, which autovacuum does only once a tenth of it changed.
ANALYZE catalog.call_records;
-- The ones they replace. Dropped last: DROP INDEX locks the table against reads too, until the migration commits.
DROP INDEX catalog.call_records_team;
DROP INDEX catalog.call_records_team_gateway;
DROP INDEX catalog.call_records_team_server;
DROP INDEX catalog.call_records_team_user;
DROP INDEX catalog.call_records_team_time;
DROP INDEX catalog.call_records_team_outcome;
DROP INDEX catalog.call_records_occurred_at;
