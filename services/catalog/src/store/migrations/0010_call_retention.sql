-- Retention (MCP_CALL_RETENTION_DAYS) deletes by time across every team.
CREATE INDEX call_records_occurred_at ON catalog.call_records (occurred_at);
