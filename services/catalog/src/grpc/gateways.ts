import type { CatalogDeps } from '../deps';
import { checkGatewayAccess } from '../domain/gateway-access';
import { createGateway, getGateway, listGateways } from '../domain/gateways';
import type { CatalogHandlers } from './handlers';

/** Gateways and the access question the OAuth server and /mcp ask; the rules live in domain/. */
export function gatewayHandlers(deps: CatalogDeps): CatalogHandlers<'createGateway' | 'listGateways' | 'getGateway' | 'checkGatewayAccess'> {
  return {
    createGateway: (request) => createGateway(deps, request),
    listGateways: (request) => listGateways(deps, request),
    getGateway: (request) => getGateway(deps, request),
    checkGatewayAccess: (request) => checkGatewayAccess(deps, request),
  };
}
