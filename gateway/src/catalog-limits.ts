/** The longest `timeoutSeconds` an MCP server may have. */
export const MAX_SERVER_TIMEOUT_SECONDS = 300;

/**
 * How long the edge waits for the catalog's RefreshMcpServer: the catalog's own bound on one discovery of the slowest
 * server allowed (max(60 s, 10 × timeoutSeconds), docs/catalog.md), and a little more. The default deadline of calls
 * between services (GRPC_DEADLINE_MS, 10 s) cut short discoveries that the server's own timeout allows (30 s by
 * default): the caller got 504 while the catalog went on and stored the outcome.
 */
export const REFRESH_DEADLINE_MS = (10 * MAX_SERVER_TIMEOUT_SECONDS + 30) * 1000;
