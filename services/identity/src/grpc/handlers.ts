import { bumpAuthGeneration, isReadMethod, readServiceStatus, type AsyncServiceImplementation } from '@platform/runtime';
import type { IdentityServiceServer } from '@platform/proto/gen/platform/identity/v1/identity';
import type { IdentityDeps } from '../deps';
import { apiKeyHandlers } from './api-keys';
import { auditHandlers } from './audit';
import { authHandlers } from './auth';
import { maintenanceHandlers } from './maintenance';
import { oauthHandlers } from './oauth';
import { peopleHandlers } from './people';
import { serviceAccountHandlers } from './service-accounts';
import { teamHandlers } from './teams';

/**
 * gRPC handlers of the identity service, one file per area; they translate messages to domain calls and back.
 * Authorisation is the edge's (gateway/src/auth/policy.ts); handlers trust the request context it sends.
 */
export function createIdentityHandlers(deps: IdentityDeps): AsyncServiceImplementation<IdentityServiceServer> {
  return invalidatingAuthentication(deps, {
    getServiceStatus: () => readServiceStatus('identity', deps.db),
    ...authHandlers(deps),
    ...peopleHandlers(deps),
    ...teamHandlers(deps),
    ...apiKeyHandlers(deps),
    ...serviceAccountHandlers(deps),
    ...auditHandlers(deps),
    ...maintenanceHandlers(deps),
    ...oauthHandlers(deps),
  });
}

/**
 * Changes that only add (a person, a team, a key, a session, an OAuth grant) and cannot make a remembered
 * authentication wrong. Any other change moves the generation: the safe default for a new method.
 */
const LEAVES_AUTHENTICATION_UNCHANGED = new Set([
  'signIn',
  'createPerson',
  'createTeam',
  'createApiKey',
  'createServiceAccount',
  'setMaintenance',
  'registerClient',
  'issueAuthorizationCode',
  'exchangeCode',
  'refreshToken',
  'setTrustedClients',
]);

/**
 * After every successful change, moves the shared auth generation on, so edges that remember authentications
 * (gateway/src/auth/authentication-cache.ts) re-check at the next request. Done here, once for every method,
 * so no change can forget it.
 */
function invalidatingAuthentication(deps: IdentityDeps, handlers: Implementation): Implementation {
  const wrapped: Record<string, unknown> = {};
  for (const [name, handler] of Object.entries(handlers) as [string, (...args: unknown[]) => Promise<unknown>][]) {
    wrapped[name] = isReadMethod(name) || LEAVES_AUTHENTICATION_UNCHANGED.has(name)
      ? handler
      : async (...args: unknown[]) => {
          const result = await handler(...args);
          await bumpAuthGeneration(deps.cache);
          return result;
        };
  }
  return wrapped as Implementation;
}

/** The handlers of one area: a subset of the service's methods. */
type Implementation = AsyncServiceImplementation<IdentityServiceServer>;
export type IdentityHandlers<K extends keyof Implementation> = Pick<Implementation, K>;
