-- The notifications schema. The runtime creates the schema, its migrations table, the outbox and the
-- processed-events table before this file runs; the service's own tables arrive with its features.
SELECT 1;
