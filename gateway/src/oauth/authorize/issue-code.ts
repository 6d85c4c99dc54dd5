import type { Request, Response } from 'express';
import type { EdgeDeps } from '../../edge-deps';
import type { SignedInPerson } from '../session';
import type { AuthorizeRequest } from './request';
import { redirectToClient } from './redirect';
import { personContext } from './request-context';

export type ConsentHow = 'remembered' | 'allowed' | 'trusted';

/** Issues the code (bound by identity to client, redirect URI, challenge, resource and person) and sends it back. */
export async function issueCodeAndRedirect(
  deps: EdgeDeps,
  req: Request,
  res: Response,
  options: { request: AuthorizeRequest; session: SignedInPerson; gatewayId: string; consent: ConsentHow; status: 302 | 303 },
): Promise<void> {
  const { request } = options;
  const issued = await deps.clients.identity.issueAuthorizationCode({
    context: personContext(req, res, options.session),
    clientId: request.client.clientId,
    redirectUri: request.redirectUri,
    redirectUriSent: request.redirectUriSent,
    codeChallenge: request.codeChallenge,
    resource: request.resource,
    gatewayId: options.gatewayId,
    gatewaySlug: request.slug,
    personId: options.session.personId,
    consent: options.consent,
  });
  redirectToClient(res, {
    redirectUri: request.redirectUri,
    issuer: deps.settings.appUrl,
    state: request.state,
    params: { code: issued.code },
    status: options.status,
  });
}
