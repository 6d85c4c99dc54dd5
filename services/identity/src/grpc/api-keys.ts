import type { IdentityDeps } from '../deps';
import { createApiKey, getApiKey, listApiKeys, revokeApiKey } from '../domain/api-keys';
import type { IdentityHandlers } from './handlers';

/** API keys (§5.1): who may call each is the edge's policy; the rules on the keys themselves are the domain's. */
export function apiKeyHandlers(deps: IdentityDeps): IdentityHandlers<'createApiKey' | 'listApiKeys' | 'getApiKey' | 'revokeApiKey'> {
  return {
    createApiKey: (request) => createApiKey(deps, request),
    listApiKeys: (request) => listApiKeys(deps, request),
    getApiKey: (request) => getApiKey(deps, request),
    revokeApiKey: (request) => revokeApiKey(deps, request),
  };
}
