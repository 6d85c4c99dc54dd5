import type { CatalogDeps } from '../deps';
import { adminUpdateMcpServer, listAllMcpServers } from '../domain/platform-servers';
import type { CatalogHandlers } from './handlers';

/** The platform admin view of every team's MCP servers (§2.4) and op 16; the rules live in domain/platform-servers.ts. */
export function platformServerHandlers(deps: CatalogDeps): CatalogHandlers<'listAllMcpServers' | 'adminUpdateMcpServer'> {
  return {
    listAllMcpServers: (request) => listAllMcpServers(deps, request),
    adminUpdateMcpServer: (request) => adminUpdateMcpServer(deps, request),
  };
}
