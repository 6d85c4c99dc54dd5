import type { CatalogDeps } from '../deps';
import { checkGatewayAccess } from '../domain/gateway-access';
import { createGateway, deleteGateway, getGateway, listGateways, updateGateway } from '../domain/gateways';
import type { CatalogHandlers } from './handlers';

/** Gateways and the access question the OAuth server and /mcp ask; the rules live in domain/. */
export function gatewayHandlers(
  deps: CatalogDeps,
): CatalogHandlers<'createGateway' | 'listGateways' | 'getGateway' | 'checkGatewayAccess' | 'updateGateway' | 'deleteGateway'> {
  return {
    createGateway: (request) => createGateway(deps, request),
    listGateways: (request) => listGateways(deps, request),
    getGateway: (request) => getGateway(deps, request),
    checkGatewayAccess: (request) => checkGatewayAccess(deps, request),
    updateGateway: (request) => updateGateway(deps, request),
    deleteGateway: (request) => deleteGateway(deps, request),
  };
}
