import type { IdentityDeps } from '../deps';
import { getIdentitySigningKeys } from '../domain/identity-token-keys';
import type { IdentityHandlers } from './handlers';

/** Identity-token keys for the edges (internal: the private key never leaves the cluster); rules in domain/. */
export function identityTokenKeyHandlers(deps: IdentityDeps): IdentityHandlers<'getIdentitySigningKeys'> {
  return {
    getIdentitySigningKeys: () => getIdentitySigningKeys(deps),
  };
}
