import type { CatalogDeps } from '../deps';
import { getCall, listCalls } from '../domain/calls';
import type { CatalogHandlers } from './handlers';

/** Records of calls made through gateways (§2.9, op 6); the consumer in events/ stores them. */
export function callHandlers(deps: CatalogDeps): CatalogHandlers<'listCalls' | 'getCall'> {
  return {
    listCalls: (request) => listCalls(deps, request),
    getCall: (request) => getCall(deps, request),
  };
}
