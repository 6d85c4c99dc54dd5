import type {
  RevokeConnectionRequest,
  RevokeConnectionResponse,
  RevokeTokenRequest,
  RevokeTokenResponse,
} from '@platform/proto/gen/platform/identity/v1/oauth';
import { AppError, auditContext, authChangeCommitted } from '@platform/runtime';
import type { IdentityDeps } from '../../deps';
import { forgetConsent } from '../../store/oauth-clients-store';
import { findPersonById } from '../../store/people-store';
import { findActiveConnectionOf, findPresentedToken, revokeConnectionAndTokens, revokeOneToken } from '../../store/oauth-grants-store';
import { anonymousActor, gatewayParent, personActor, viaClient, writeOAuthAudit } from './audit';
import { ACCESS_TOKEN_PREFIX, REFRESH_TOKEN_PREFIX } from './token-pair';
import { UUID } from './validation';

/** Why the edge itself revokes a grant (the client never sets a reason; RFC 7009 has none). */
const EDGE_REVOCATION_REASONS = ['gateway_access_lost'] as const;

/**
 * RFC 7009 revocation: a refresh token ends its whole connection, an access token only itself. A token of
 * another client, an unknown, expired or already revoked one changes nothing and still succeeds (the edge
 * answers 200). The hint is not needed: the token's kind is known from the store. Audited, and the auth
 * generation moved (edges stop trusting what they remember), only when something was revoked. The edge also ends
 * a grant it has just issued when the person may no longer use its gateway (reason gateway_access_lost).
 */
export async function revokeToken(deps: IdentityDeps, request: RevokeTokenRequest): Promise<RevokeTokenResponse> {
  if (request.reason && !(EDGE_REVOCATION_REASONS as readonly string[]).includes(request.reason)) {
    throw AppError.invalid('Unknown revocation reason', [{ field: 'reason', problem: `must be empty or one of ${EDGE_REVOCATION_REASONS.join(', ')}` }]);
  }
  const token = request.token;
  if (!token || !request.clientId || !(token.startsWith(ACCESS_TOKEN_PREFIX) || token.startsWith(REFRESH_TOKEN_PREFIX))) return {};
  const digest = deps.secrets.digester.digest(token);
  const revoked = await deps.db.transaction(async (tx) => {
    const presented = await findPresentedToken(tx, digest);
    if (!presented || !presented.live || presented.client_id !== request.clientId) return false;
    const ended = presented.kind === 'refresh' ? (await revokeConnectionAndTokens(tx, presented.connection_id)) !== null : await revokeOneToken(tx, digest);
    if (!ended) return false;
    const person = await findPersonById(tx, presented.person_id);
    await writeOAuthAudit(tx, {
      action: 'oauth.revoke',
      actor: person ? personActor({ id: person.id, email: person.email, displayName: person.display_name }) : anonymousActor,
      via: viaClient(presented.client_name, presented.client_id),
      requestId: request.requestId,
      clientIp: request.clientIp,
      target: { type: 'oauth_connection', id: presented.connection_id, label: presented.client_name || presented.client_id },
      parent: gatewayParent(presented.gateway_id, presented.gateway_slug),
      metadata: {
        connectionId: presented.connection_id,
        kind: presented.kind === 'refresh' ? 'refresh_token' : 'access_token',
        clientId: presented.client_id,
        ...(request.reason ? { reason: request.reason } : {}),
      },
    });
    return true;
  });
  if (revoked) await authChangeCommitted(deps);
  return {};
}

/**
 * A person disconnects an app (or a platform admin does it for them, from the person's page): the connection
 * and all its tokens end, and the consent remembered for that client at that gateway is forgotten in the same
 * transaction, so the app cannot reconnect silently: its next authorization shows the consent page again.
 * 404 unless it is the person's own, not yet revoked connection.
 */
export async function revokeConnection(deps: IdentityDeps, request: RevokeConnectionRequest): Promise<RevokeConnectionResponse> {
  if (!UUID.test(request.personId) || !UUID.test(request.connectionId)) throw AppError.notFound('Connection');
  await deps.db.transaction(async (tx) => {
    const connection = await findActiveConnectionOf(tx, request.personId, request.connectionId);
    if (!connection) throw AppError.notFound('Connection');
    const revoked = await revokeConnectionAndTokens(tx, connection.id);
    if (!revoked) throw AppError.notFound('Connection');
    await forgetConsent(tx, connection.person_id, connection.client_id, connection.gateway_id);
    const actorId = request.context?.actor?.userId ?? '';
    await writeOAuthAudit(tx, {
      ...auditContext(request.context),
      action: 'oauth.revoke',
      target: { type: 'oauth_connection', id: connection.id, label: connection.client_name || connection.client_id },
      parent: gatewayParent(connection.gateway_id, connection.gateway_slug),
      metadata: {
        connectionId: connection.id,
        clientId: connection.client_id,
        personId: connection.person_id,
        by: actorId && actorId !== connection.person_id ? 'admin' : 'person',
      },
    });
  });
  return {};
}
