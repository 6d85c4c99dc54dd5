import { invalidatingAuthentication, readServiceStatus, type AsyncServiceImplementation } from '@platform/runtime';
import type { CatalogServiceServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import type { CatalogDeps } from '../deps';
import { callHandlers } from './calls';
import { capabilityHandlers } from './capabilities';
import { gatewayRuntimeHandlers } from './gateway-runtime';
import { gatewayHandlers } from './gateways';
import { mcpServerHandlers } from './mcp-servers';
import { platformServerHandlers } from './platform-servers';
import { publishingHandlers } from './publishing';
import { teamCatalogHandlers } from './team-catalog';

/**
 * gRPC handlers of the catalog service, one file per area; they translate messages to domain calls and back.
 * Authorisation is the edge's (gateway/src/auth/policy.ts); handlers trust the request context it sends.
 */
export function createCatalogServiceHandlers(deps: CatalogDeps): AsyncServiceImplementation<CatalogServiceServer> {
  // Gateway changes decide who may use /mcp/{slug}; edges remember that answer, so those changes move the auth
  // generation (creating a gateway cannot make a remembered answer wrong).
  return invalidatingAuthentication(
    deps,
    {
      getServiceStatus: () => readServiceStatus('catalog', deps.db),
      ...gatewayHandlers(deps),
      ...gatewayRuntimeHandlers(deps),
      ...mcpServerHandlers(deps),
      ...capabilityHandlers(deps),
      ...platformServerHandlers(deps),
      ...teamCatalogHandlers(deps),
      ...publishingHandlers(deps),
      ...callHandlers(deps),
    },
    // MCP servers, their discovery, publishing and approvals change what a gateway exposes (edges hear of that
    // through the catalog generation), never who may use it: only gateway changes and deletions do.
    [
      'createGateway',
      'createMcpServer',
      'updateMcpServer',
      'deleteMcpServer',
      'adminUpdateMcpServer',
      'refreshMcpServer',
      'publishMcpServer',
      'reviewMcpServer',
      'approveCapability',
    ],
  );
}

/** The handlers of one area: a subset of the service's methods. */
type Implementation = AsyncServiceImplementation<CatalogServiceServer>;
export type CatalogHandlers<K extends keyof Implementation> = Pick<Implementation, K>;
