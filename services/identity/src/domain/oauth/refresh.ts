import type { RefreshTokenRequest, TokenResponse } from '@platform/proto/gen/platform/identity/v1/oauth';
import type { Transaction } from '@platform/runtime';
import type { IdentityDeps } from '../../deps';
import {
  claimRefreshToken,
  findRetiredRefreshToken,
  insertRotatedPair,
  revokeConnectionAndTokens,
  type RefreshContextRow,
} from '../../store/oauth-grants-store';
import { gatewayParent, personActor, viaClient, writeOAuthAudit } from './audit';
import { OAuthRefusal, oauthError } from './errors';
import { REFRESH_REPLAY_GRACE_SECONDS } from './limits';
import { newTokenPair, REFRESH_TOKEN_PREFIX, tokenResponse } from './token-pair';
import { empty } from './tokens';

const INVALID = 'The refresh token is invalid, expired or revoked.';

/**
 * The refresh_token grant with rotation (§5.5, §3, OAuth 2.1 §4.3.1, RFC 9700 §4.14.2):
 * - a live, unrotated token is claimed atomically and replaced by a new pair of the next generation;
 * - a token rotated at most 30 s ago that is the immediate predecessor of the newest generation gets another
 *   pair (a client refreshing twice at once sees both succeed);
 * - a retired token presented later, or an older generation, revokes the whole connection (replay detected);
 * - unknown, expired, revoked, another client's, a revoked connection or an inactive person: invalid_grant,
 *   with nothing claimed (the transaction rolls back).
 * A few statements in one transaction: claim (joined with connection and person), new pair, audit.
 */
export async function refreshToken(deps: IdentityDeps, request: RefreshTokenRequest): Promise<TokenResponse> {
  if (!request.refreshToken) return { ...empty, error: oauthError('invalid_request', 'refresh_token is required.') };
  if (!request.clientId) return { ...empty, error: oauthError('invalid_request', 'client_id is required.') };
  if (!request.refreshToken.startsWith(REFRESH_TOKEN_PREFIX)) return { ...empty, error: oauthError('invalid_grant', INVALID) };
  const digest = deps.secrets.digester.digest(request.refreshToken);
  try {
    return await deps.db.transaction(async (tx) => {
      const claimed = await claimRefreshToken(tx, digest);
      if (claimed) {
        checkUsable(claimed, request);
        return issuePair(deps, tx, claimed, claimed.generation + 1, request);
      }
      const retired = await findRetiredRefreshToken(tx, digest, REFRESH_REPLAY_GRACE_SECONDS);
      if (!retired || !retired.rotated || retired.connection_revoked) return { ...empty, error: oauthError('invalid_grant', INVALID) };
      checkUsable(retired, request);
      if (retired.in_grace && retired.generation === retired.refresh_generation - 1) {
        return issuePair(deps, tx, retired, retired.refresh_generation, request);
      }
      const revoked = await revokeConnectionAndTokens(tx, retired.connection_id);
      if (revoked) {
        await writeOAuthAudit(tx, {
          action: 'oauth.revoke',
          actor: personActor({ id: retired.person_id, email: retired.email, displayName: retired.display_name }),
          via: viaClient(retired.client_name, retired.client_id),
          requestId: request.requestId,
          clientIp: request.clientIp,
          target: { type: 'oauth_connection', id: retired.connection_id, label: retired.client_name || retired.client_id },
          parent: gatewayParent(retired.gateway_id, retired.gateway_slug),
          metadata: { connectionId: retired.connection_id, clientId: retired.client_id, kind: 'refresh_token', reason: 'refresh_token_reuse' },
        });
      }
      return { ...empty, error: oauthError('invalid_grant', 'The refresh token was already used; the connection has been revoked.') };
    });
  } catch (error) {
    if (error instanceof OAuthRefusal) return { ...empty, error: error.oauth };
    throw error;
  }
}

/** Bound to its client, to its resource (RFC 8707 §2.2) and to an active person on a live connection. */
function checkUsable(row: RefreshContextRow, request: RefreshTokenRequest): void {
  if (row.client_id !== request.clientId) throw new OAuthRefusal('invalid_grant', 'The refresh token was issued to another client.');
  if (row.connection_revoked || row.person_status !== 'active') throw new OAuthRefusal('invalid_grant', INVALID);
  if (request.resource && request.resource !== row.resource) throw new OAuthRefusal('invalid_target', 'resource does not match the grant.');
}

async function issuePair(deps: IdentityDeps, tx: Transaction, row: RefreshContextRow, generation: number, request: RefreshTokenRequest): Promise<TokenResponse> {
  const pair = newTokenPair(deps, generation);
  await insertRotatedPair(tx, row.connection_id, pair.stored);
  await writeOAuthAudit(tx, {
    action: 'oauth.token_issue',
    actor: personActor({ id: row.person_id, email: row.email, displayName: row.display_name }),
    via: viaClient(row.client_name, row.client_id),
    requestId: request.requestId,
    clientIp: request.clientIp,
    target: { type: 'oauth_connection', id: row.connection_id, label: row.client_name || row.client_id },
    parent: gatewayParent(row.gateway_id, row.gateway_slug),
    metadata: { clientId: row.client_id, gatewayId: row.gateway_id, connectionId: row.connection_id, grant: 'refresh_token', generation },
  });
  return tokenResponse(pair.values);
}
