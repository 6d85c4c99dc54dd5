-- A team's audit entries by actor and by action (exact, or a prefix such as 'oauth.'), newest first. Without them a
-- page filtered by an actor, or by an action the team has few or none of, walked or scanned every team's entries
-- (about 2 s at 20 M entries, measured); with them it reads about a page. text_pattern_ops serves both = and the
-- LIKE 'prefix%' of an action prefix, whatever the database's collation.
CREATE INDEX audit_entries_team_actor ON identity.audit_entries (team_id, actor_user_id, id DESC);
CREATE INDEX audit_entries_team_action ON identity.audit_entries (team_id, action text_pattern_ops, id DESC);
