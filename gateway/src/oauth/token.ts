import type { Express, Request, Response } from 'express';
import type { TokenResponse } from '@platform/proto/gen/platform/identity/v1/oauth';
import type { EdgeDeps } from '../edge-deps';
import { requestIdOf } from '../request-id';
import { missingParameter, mountPostEndpoint, refusedClientAuthentication } from './endpoint';
import { readForm } from './form-body';
import { NO_STORE, sendOAuthError } from './oauth-errors';
import { clientAddressOf } from './rate-limits';

/**
 * `POST /oauth/token` (RFC 6749 §3.2, OAuth 2.1): form-encoded, public clients, grants `authorization_code`
 * (PKCE required) and `refresh_token`. The identity service decides; the edge shapes the answer.
 */
export function mountToken(app: Express, deps: EdgeDeps): void {
  mountPostEndpoint(app, deps, { path: '/oauth/token', endpoint: 'token', handler: (req, res) => token(deps, req, res) });
}

async function token(deps: EdgeDeps, req: Request, res: Response): Promise<void> {
  const form = await readForm(req);
  if (!form.ok) return sendOAuthError(res, 'invalid_request', form.problem);
  const params = form.params;
  if (refusedClientAuthentication(req, res, params)) return;
  const grantType = params.get('grant_type');
  const common = { clientIp: clientAddressOf(req), requestId: requestIdOf(res), resource: params.get('resource') ?? '' };
  if (grantType === 'authorization_code') {
    if (missingParameter(res, params, ['code', 'code_verifier', 'client_id'])) return;
    const result = await deps.clients.identity.exchangeCode({
      ...common,
      code: params.get('code')!,
      clientId: params.get('client_id')!,
      redirectUri: params.get('redirect_uri') ?? '',
      codeVerifier: params.get('code_verifier')!,
    });
    return sendTokens(res, result);
  }
  if (grantType === 'refresh_token') {
    if (missingParameter(res, params, ['refresh_token', 'client_id'])) return;
    const result = await deps.clients.identity.refreshToken({
      ...common,
      refreshToken: params.get('refresh_token')!,
      clientId: params.get('client_id')!,
    });
    return sendTokens(res, result);
  }
  if (grantType === undefined) return sendOAuthError(res, 'invalid_request', 'grant_type is required');
  sendOAuthError(res, 'unsupported_grant_type', 'Supported grant types: authorization_code, refresh_token');
}

function sendTokens(res: Response, result: TokenResponse): void {
  if (result.error?.error) return sendOAuthError(res, result.error.error, result.error.errorDescription);
  res.status(200).set(NO_STORE).json({
    access_token: result.accessToken,
    token_type: result.tokenType || 'Bearer',
    expires_in: result.expiresIn,
    refresh_token: result.refreshToken,
  });
}
