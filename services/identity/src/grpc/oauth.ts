import type { IdentityDeps } from '../deps';
import { validateAccessToken } from '../domain/oauth/access-tokens';
import { resolveClient } from '../domain/oauth/clients';
import { issueAuthorizationCode } from '../domain/oauth/codes';
import { listConnections } from '../domain/oauth/connections';
import { getConsent } from '../domain/oauth/consent';
import { refreshToken } from '../domain/oauth/refresh';
import { registerClient } from '../domain/oauth/registration';
import { revokeConnection, revokeToken } from '../domain/oauth/revocation';
import { exchangeCode } from '../domain/oauth/tokens';
import { listTrustedClients, setTrustedClients } from '../domain/oauth/trusted-clients';
import type { IdentityHandlers } from './handlers';

/**
 * The OAuth 2.1 authorization server's state and rules (§4.1, §5.5). Protocol failures come back as
 * `OAuthError` values inside results, so the edge can answer in RFC 6749's shape; only misuse of the RPCs
 * themselves (bad fields from the edge, unknown connection) is an AppError.
 */
export function oauthHandlers(
  deps: IdentityDeps,
): IdentityHandlers<
  | 'registerClient'
  | 'resolveClient'
  | 'getConsent'
  | 'issueAuthorizationCode'
  | 'exchangeCode'
  | 'refreshToken'
  | 'revokeToken'
  | 'validateAccessToken'
  | 'listConnections'
  | 'revokeConnection'
  | 'listTrustedClients'
  | 'setTrustedClients'
> {
  return {
    registerClient: (request) => registerClient(deps, request),
    resolveClient: (request) => resolveClient(deps, request),
    getConsent: (request) => getConsent(deps, request),
    issueAuthorizationCode: (request) => issueAuthorizationCode(deps, request),
    exchangeCode: (request) => exchangeCode(deps, request),
    refreshToken: (request) => refreshToken(deps, request),
    revokeToken: (request) => revokeToken(deps, request),
    validateAccessToken: (request) => validateAccessToken(deps, request),
    listConnections: (request) => listConnections(deps, request),
    revokeConnection: (request) => revokeConnection(deps, request),
    listTrustedClients: () => listTrustedClients(deps),
    setTrustedClients: (request) => setTrustedClients(deps, request),
  };
}
