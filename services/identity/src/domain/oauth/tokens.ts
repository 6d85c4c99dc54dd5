import { randomUUID } from 'node:crypto';
import type { ExchangeCodeRequest, TokenResponse } from '@platform/proto/gen/platform/identity/v1/oauth';
import { sameResource } from '@platform/runtime';
import type { IdentityDeps } from '../../deps';
import { claimCode, findUsedCode, insertConnectionWithTokens, revokeConnectionAndTokens } from '../../store/oauth-grants-store';
import { anonymousActor, gatewayParent, personActor, viaClient, writeOAuthAudit } from './audit';
import { OAuthRefusal, oauthError } from './errors';
import { newTokenPair, tokenResponse } from './token-pair';
import { CODE_VERIFIER, pkceMatches } from './validation';

/**
 * The authorization_code grant: claims the code atomically (first use within 60 s), checks it against the
 * request (client, exact redirect URI, PKCE S256, resource) and creates the connection with its first pair.
 * A failed check rolls the claim back (the rightful client can still use the code). A second use of a used
 * code fails and revokes the connection the first use created (RFC 6749 §4.1.2, OAuth 2.1 §4.1.3).
 */
export async function exchangeCode(deps: IdentityDeps, request: ExchangeCodeRequest): Promise<TokenResponse> {
  if (!request.code) return { ...empty, error: oauthError('invalid_request', 'code is required.') };
  if (!request.clientId) return { ...empty, error: oauthError('invalid_request', 'client_id is required.') };
  if (!request.codeVerifier) return { ...empty, error: oauthError('invalid_request', 'code_verifier is required.') };
  if (!CODE_VERIFIER.test(request.codeVerifier)) {
    return { ...empty, error: oauthError('invalid_request', 'code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~.') };
  }
  const digest = deps.secrets.digester.digest(request.code);
  const connectionId = randomUUID();
  try {
    return await deps.db.transaction(async (tx) => {
      const code = await claimCode(tx, digest, connectionId);
      if (!code) {
        const used = await findUsedCode(tx, digest);
        if (used?.connection_id) {
          const revoked = await revokeConnectionAndTokens(tx, used.connection_id);
          if (revoked) {
            await writeOAuthAudit(tx, {
              action: 'oauth.revoke',
              actor: anonymousActor,
              requestId: request.requestId,
              clientIp: request.clientIp,
              target: { type: 'oauth_connection', id: revoked.id, label: revoked.client_name || revoked.client_id },
              parent: gatewayParent(revoked.gateway_id, revoked.gateway_slug),
              metadata: { connectionId: revoked.id, clientId: revoked.client_id, reason: 'authorization_code_reuse' },
            });
          }
          return { ...empty, error: oauthError('invalid_grant', 'The authorization code has already been used.') };
        }
        return { ...empty, error: oauthError('invalid_grant', 'The authorization code is invalid or expired.') };
      }
      if (code.client_id !== request.clientId) throw new OAuthRefusal('invalid_grant', 'The authorization code was issued to another client.');
      // RFC 6749 §4.1.3: required (and identical) only when the authorization request named it.
      if (!request.redirectUri && code.redirect_uri_sent) throw new OAuthRefusal('invalid_request', 'redirect_uri is required: the authorization request named it.');
      if (request.redirectUri && code.redirect_uri !== request.redirectUri) {
        throw new OAuthRefusal('invalid_grant', 'redirect_uri does not match the authorization request.');
      }
      if (!pkceMatches(request.codeVerifier, code.code_challenge)) throw new OAuthRefusal('invalid_grant', 'code_verifier does not match the code challenge.');
      // Compared as the edge compared it at authorize (RFC 8707 §2): http://HOST:80/mcp/x names http://host/mcp/x.
      if (request.resource && !sameResource(request.resource, code.resource)) {
        throw new OAuthRefusal('invalid_target', 'resource does not match the authorization request.');
      }
      if (code.person_status !== 'active') throw new OAuthRefusal('invalid_grant', 'The authorization is no longer valid.');

      const pair = newTokenPair(deps, 1);
      await insertConnectionWithTokens(
        tx,
        {
          id: connectionId,
          personId: code.person_id,
          clientId: code.client_id,
          clientName: code.client_name,
          clientVerified: code.client_verified,
          gatewayId: code.gateway_id,
          gatewaySlug: code.gateway_slug,
          resource: code.resource,
        },
        pair.stored,
      );
      await writeOAuthAudit(tx, {
        action: 'oauth.token_issue',
        actor: personActor({ id: code.person_id, email: code.email, displayName: code.display_name }),
        via: viaClient(code.client_name, code.client_id),
        requestId: request.requestId,
        clientIp: request.clientIp,
        target: { type: 'oauth_connection', id: connectionId, label: code.client_name || code.client_id },
        parent: gatewayParent(code.gateway_id, code.gateway_slug),
        metadata: { clientId: code.client_id, gatewayId: code.gateway_id, connectionId, grant: 'authorization_code' },
      });
      return tokenResponse(pair.values, code);
    });
  } catch (error) {
    if (error instanceof OAuthRefusal) return { ...empty, error: error.oauth };
    throw error;
  }
}

/** The success fields left empty, for error results. */
export const empty: TokenResponse = { accessToken: '', refreshToken: '', expiresIn: 0, tokenType: '', personId: '', gatewayId: '', gatewaySlug: '' };
