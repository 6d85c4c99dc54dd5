import type { CatalogDeps } from '../deps';
import { resolveGateway } from '../domain/gateway-runtime';
import type { CatalogHandlers } from './handlers';

/** The data plane's view of a gateway (internal: the edge's /mcp/{slug} only); the rules live in domain/gateway-runtime.ts. */
export function gatewayRuntimeHandlers(deps: CatalogDeps): CatalogHandlers<'resolveGateway'> {
  return {
    resolveGateway: (request) => resolveGateway(deps, request),
  };
}
