-- Removing something marks the audit entries whose parent it was (markTargetGone): without an index on the parent,
-- each removal scanned the whole audit log inside the removing transaction, slower as the log grows.
CREATE INDEX audit_entries_parent ON identity.audit_entries ((parent->>'type'), (parent->>'id'));
