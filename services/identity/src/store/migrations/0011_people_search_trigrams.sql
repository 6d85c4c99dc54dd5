-- The admin people search matches a substring of the email or display name (ILIKE '%text%'), which no btree can
-- serve: at 100k people every search read the whole table. Trigram GIN indexes serve it for a search text of three
-- characters or more. pg_trgm is a trusted extension (PostgreSQL 13+): a role with CREATE on the database may create
-- it (here, in the identity schema); otherwise a superuser creates it beforehand, in whatever schema the
-- installation keeps extensions (public, or `extensions` on some managed services) and this line does nothing.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
-- The operator class is named with the schema the extension lives in, found rather than assumed, so the indexes
-- are made wherever it was created.
DO $$
DECLARE
  trigram_ops text;
BEGIN
  SELECT format('%I.%I', n.nspname, c.opcname) INTO STRICT trigram_ops
    FROM pg_opclass c
    JOIN pg_namespace n ON n.oid = c.opcnamespace
    JOIN pg_am a ON a.oid = c.opcmethod
   WHERE c.opcname = 'gin_trgm_ops' AND a.amname = 'gin';
  EXECUTE format('CREATE INDEX people_email_trigrams ON identity.people USING gin (email %s)', trigram_ops);
  EXECUTE format('CREATE INDEX people_display_name_trigrams ON identity.people USING gin (display_name %s)', trigram_ops);
END
$$;
