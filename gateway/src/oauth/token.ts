import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';
import type { TokenResponse } from '@platform/proto/gen/platform/identity/v1/oauth';
import type { EdgeDeps } from '../edge-deps';
import { requestIdOf } from '../request-id';
import { missingParameter, mountPostEndpoint, refusedClientAuthentication, type OAuthPostEndpoint } from './endpoint';
import { readForm } from './form-body';
import { createGrantAccessCheck, GrantWithoutGateway } from './grant-access';
import { sendNoStoreJson } from './no-store';
import { sendOAuthError, sendTemporarilyUnavailable } from './oauth-errors';

export const TOKEN_PATH = '/oauth/token';

/** Whether the person of an issued grant may still use its gateway (`grant-access.ts`). */
type GrantAccessCheck = (grant: TokenResponse) => Promise<boolean>;

/**
 * `POST /oauth/token` (RFC 6749 §3.2, OAuth 2.1): form-encoded, public clients, grants `authorization_code`
 * (PKCE required) and `refresh_token`. The identity service decides; the edge shapes the answer, and hands tokens
 * over only while the person may still use the grant's gateway.
 */
export function tokenEndpoint(deps: EdgeDeps): OAuthPostEndpoint {
  const grantAccess = createGrantAccessCheck(deps);
  return { path: TOKEN_PATH, endpoint: 'token', handler: (req, res, clientAddress) => token(deps, grantAccess, req, res, clientAddress) };
}

/**
 * The token endpoint on express too: the exact path is served ahead of express (`token-endpoint.ts`), but express's
 * router also matches the path in another case, with a trailing slash or in an absolute-form request target, and
 * those keep being answered as they always were.
 */
export function mountToken(app: Express, deps: EdgeDeps): void {
  mountPostEndpoint(app, deps, tokenEndpoint(deps));
}

async function token(deps: EdgeDeps, grantAccess: GrantAccessCheck, req: IncomingMessage, res: ServerResponse, clientAddress: string): Promise<void> {
  const form = await readForm(req);
  if (!form.ok) return sendOAuthError(res, 'invalid_request', form.problem);
  const params = form.params;
  if (refusedClientAuthentication(req, res, params)) return;
  const grantType = params.get('grant_type');
  const common = { clientIp: clientAddress, requestId: requestIdOf(res), resource: params.get('resource') ?? '' };
  const send = (result: TokenResponse) => sendGrant(deps, grantAccess, res, result, { ...common, clientId: params.get('client_id')! });
  if (grantType === 'authorization_code') {
    if (missingParameter(res, params, ['code', 'code_verifier', 'client_id'])) return;
    const result = await deps.clients.identity.exchangeCode({
      ...common,
      code: params.get('code')!,
      clientId: params.get('client_id')!,
      redirectUri: params.get('redirect_uri') ?? '',
      codeVerifier: params.get('code_verifier')!,
    });
    return send(result);
  }
  if (grantType === 'refresh_token') {
    if (missingParameter(res, params, ['refresh_token', 'client_id'])) return;
    const result = await deps.clients.identity.refreshToken({
      ...common,
      refreshToken: params.get('refresh_token')!,
      clientId: params.get('client_id')!,
    });
    return send(result);
  }
  if (grantType === undefined) return sendOAuthError(res, 'invalid_request', 'grant_type is required');
  sendOAuthError(res, 'unsupported_grant_type', 'Supported grant types: authorization_code, refresh_token');
}

/**
 * Identity's answer to a grant. Success is handed over only when the person may still use the grant's gateway: a
 * refresh (or a code exchanged) after they lost access must fail, so the edge ends the grant it was just given
 * (the connection, audited with reason gateway_access_lost) and answers invalid_grant. If the check itself fails
 * (the catalog is unavailable), nothing is handed over: a 503, and the client may retry with the same refresh token
 * within the 30 s replay grace. So too when identity named no person or gateway for the grant (an identity of the
 * previous version, during a rolling upgrade), logged at warn: a state of the deployment, not a fault of the edge.
 */
async function sendGrant(
  deps: EdgeDeps,
  grantAccess: GrantAccessCheck,
  res: ServerResponse,
  result: TokenResponse,
  request: { clientId: string; clientIp: string; requestId: string },
): Promise<void> {
  if (result.error?.error) return sendOAuthError(res, result.error.error, result.error.errorDescription);
  let allowed: boolean;
  try {
    allowed = await grantAccess(result);
  } catch (error) {
    if (!(error instanceof GrantWithoutGateway)) throw error;
    deps.logger.warn('the identity service answered a grant without its person or gateway (version skew: an identity of an earlier version?); nothing was handed over, the client was answered 503');
    return sendTemporarilyUnavailable(res);
  }
  if (!allowed) {
    await deps.clients.identity.revokeToken({
      token: result.refreshToken,
      tokenTypeHint: 'refresh_token',
      clientId: request.clientId,
      clientIp: request.clientIp,
      requestId: request.requestId,
      reason: 'gateway_access_lost',
    });
    return sendOAuthError(res, 'invalid_grant', 'The grant is no longer valid: the gateway cannot be used by this person. Authorize again.');
  }
  sendTokens(res, result);
}

function sendTokens(res: ServerResponse, result: TokenResponse): void {
  sendNoStoreJson(
    res,
    200,
    JSON.stringify({
      access_token: result.accessToken,
      token_type: result.tokenType || 'Bearer',
      expires_in: result.expiresIn,
      refresh_token: result.refreshToken,
    }),
  );
}
