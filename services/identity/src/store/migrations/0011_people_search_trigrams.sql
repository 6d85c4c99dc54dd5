-- The admin people search matches a substring of the email or display name (ILIKE '%text%'), which no btree can
-- serve: at 100k people every search read the whole table. Trigram GIN indexes serve it for a search text of three
-- characters or more. pg_trgm is a trusted extension (PostgreSQL 13+): a role with CREATE on the database may create
-- it (here, in the identity schema); otherwise a superuser creates it beforehand (in public) and this line does nothing.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX people_email_trigrams ON identity.people USING gin (email gin_trgm_ops);
CREATE INDEX people_display_name_trigrams ON identity.people USING gin (display_name gin_trgm_ops);
