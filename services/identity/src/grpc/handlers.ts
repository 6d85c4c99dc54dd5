import { invalidatingAuthentication, readServiceStatus, type AsyncServiceImplementation } from '@platform/runtime';
import type { IdentityServiceServer } from '@platform/proto/gen/platform/identity/v1/identity';
import type { IdentityDeps } from '../deps';
import { apiKeyHandlers } from './api-keys';
import { auditHandlers } from './audit';
import { authHandlers } from './auth';
import { identityTokenKeyHandlers } from './identity-token-keys';
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
    ...identityTokenKeyHandlers(deps),
  }, LEAVES_AUTHENTICATION_UNCHANGED);
}

/**
 * Changes that only add (a person, a key, a registration, a code) and cannot make a remembered answer wrong.
 * Sign-in (it sets the person's last sign-in) and team creation (it makes its owner a member) are not here:
 * edges remember `GET /v1/me` too. The code grant is not here: a replayed code revokes. The refresh grant is,
 * because it moves the generation itself when a replay revoked (domain/oauth/refresh.ts); a rotation only adds.
 * Token revocation (RFC 7009) moves it itself when it revoked something (domain/oauth/revocation.ts): anyone may
 * send it any string, and a revocation that changed nothing must not make every edge ask identity again.
 */
const LEAVES_AUTHENTICATION_UNCHANGED = [
  'createPerson',
  'createApiKey',
  'createServiceAccount',
  'setMaintenance',
  'registerClient',
  'issueAuthorizationCode',
  'refreshToken',
  'revokeToken',
  'setTrustedClients',
];

/** The handlers of one area: a subset of the service's methods. */
type Implementation = AsyncServiceImplementation<IdentityServiceServer>;
export type IdentityHandlers<K extends keyof Implementation> = Pick<Implementation, K>;
