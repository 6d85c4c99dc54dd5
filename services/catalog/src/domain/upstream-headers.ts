import type { CatalogDeps } from '../deps';
import type { McpServerRow } from '../store/mcp-servers-mappers';

/**
 * The static headers sent to a server's upstream: its further headers (admin view) and its credential header.
 * Unsealed only here, for a connection to the upstream (discovery, health checks) or for the data plane's
 * ResolveGateway; never logged or presented.
 */
export function upstreamHeadersOf(deps: Pick<CatalogDeps, 'secrets'>, row: McpServerRow): Record<string, string> {
  const headers: Record<string, string> = {};
  if (row.headers_sealed) Object.assign(headers, JSON.parse(deps.secrets.secretBox.decrypt(row.headers_sealed, row.id)) as Record<string, string>);
  if (row.auth_value_sealed !== null) headers[row.auth_header_name || 'Authorization'] = deps.secrets.secretBox.decrypt(row.auth_value_sealed, row.id);
  return headers;
}
