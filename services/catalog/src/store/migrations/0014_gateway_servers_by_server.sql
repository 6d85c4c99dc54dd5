-- The gateways that name a server, by gateway id: a refresh that changes what the server exposes names them all, a
-- page at a time (domain/refresh-exposure.ts), and a server may be in any number of gateways. With the index on
-- server_id alone every page read and sorted all of them. This one also serves every lookup by server_id.
CREATE INDEX gateway_servers_server_gateway ON catalog.gateway_servers (server_id, gateway_id);
DROP INDEX catalog.gateway_servers_server;
