import type { CatalogDeps } from '../deps';
import { createMcpServer, deleteMcpServer, getMcpServer, listMcpServers, updateMcpServer } from '../domain/mcp-servers';
import type { CatalogHandlers } from './handlers';

/** A team's MCP server records; the rules live in domain/mcp-servers.ts. */
export function mcpServerHandlers(
  deps: CatalogDeps,
): CatalogHandlers<'createMcpServer' | 'listMcpServers' | 'getMcpServer' | 'updateMcpServer' | 'deleteMcpServer'> {
  return {
    createMcpServer: (request) => createMcpServer(deps, request),
    listMcpServers: (request) => listMcpServers(deps, request),
    getMcpServer: (request) => getMcpServer(deps, request),
    updateMcpServer: (request) => updateMcpServer(deps, request),
    deleteMcpServer: (request) => deleteMcpServer(deps, request),
  };
}
