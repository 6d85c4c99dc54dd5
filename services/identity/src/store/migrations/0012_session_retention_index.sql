-- Sessions are deleted SESSION_RETENTION_DAYS after they were over: when they expired or were ended, whichever came
-- first (LEAST ignores a NULL ended_at). Without this index each chunk of that deletion scanned every session.
CREATE INDEX sessions_over_at ON identity.sessions (LEAST(expires_at, ended_at));
