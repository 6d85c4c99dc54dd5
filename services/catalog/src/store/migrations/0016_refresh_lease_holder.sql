-- Who holds a server's refresh lease (docs/catalog.md, One discovery of a server at a time): the catalog replica
-- (a random id per process) and the refresh itself (a random token). A replica knows which of its refreshes still
-- run, so it takes over a lease of its own that a failed refresh could not let go; only the token's holder renews,
-- finishes or lets go of the lease. NULL while nobody holds it.
ALTER TABLE catalog.mcp_servers ADD COLUMN refresh_lease_replica uuid;
ALTER TABLE catalog.mcp_servers ADD COLUMN refresh_lease_token uuid;
