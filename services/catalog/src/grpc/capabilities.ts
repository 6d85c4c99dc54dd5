import type { CatalogDeps } from '../deps';
import { listCapabilities, refreshMcpServer } from '../domain/capabilities';
import type { CatalogHandlers } from './handlers';

/** Capabilities of a team's MCP servers: discovery and the stored list; the rules live in domain/capabilities.ts. */
export function capabilityHandlers(deps: CatalogDeps): CatalogHandlers<'refreshMcpServer' | 'listCapabilities'> {
  return {
    refreshMcpServer: (request) => refreshMcpServer(deps, request),
    listCapabilities: (request) => listCapabilities(deps, request),
  };
}
