import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';
import type { EdgeDeps } from '../edge-deps';
import { requestIdOf } from '../request-id';
import { missingParameter, mountPostEndpoint, refusedClientAuthentication } from './endpoint';
import { readForm } from './form-body';
import { setNoStoreHead } from './no-store';
import { sendOAuthError } from './oauth-errors';

/**
 * `POST /oauth/revoke` (RFC 7009): a refresh token ends its whole connection, an access token itself; another
 * client's or an unknown token changes nothing. Every valid request answers 200 with an empty body, so the
 * answer never tells whether a token existed.
 */
export function mountRevoke(app: Express, deps: EdgeDeps): void {
  mountPostEndpoint(app, deps, { path: '/oauth/revoke', endpoint: 'revoke', handler: (req, res, clientAddress) => revoke(deps, req, res, clientAddress) });
}

async function revoke(deps: EdgeDeps, req: IncomingMessage, res: ServerResponse, clientAddress: string): Promise<void> {
  const form = await readForm(req);
  if (!form.ok) return sendOAuthError(res, 'invalid_request', form.problem);
  const params = form.params;
  if (refusedClientAuthentication(req, res, params)) return;
  if (missingParameter(res, params, ['token', 'client_id'])) return;
  await deps.clients.identity.revokeToken({
    token: params.get('token')!,
    tokenTypeHint: params.get('token_type_hint') ?? '',
    clientId: params.get('client_id')!,
    clientIp: clientAddress,
    requestId: requestIdOf(res),
    // Only the edge names a reason, for a grant it ends itself (token.ts); a client's revocation has none.
    reason: '',
  });
  setNoStoreHead(res, 200);
  res.end();
}
