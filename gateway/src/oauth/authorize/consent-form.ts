import type { Gateway } from '@platform/proto/gen/platform/catalog/v1/catalog';
import type { Response } from 'express';
import type { EdgeDeps } from '../../edge-deps';
import { consentPage } from '../pages/consent-page';
import { sendPage } from '../pages/html';
import { formToken, type SignedInPerson } from '../session';
import { AUTHORIZE_PARAMETERS, type AuthorizeRequest } from './request';

export const AUTHORIZE_PATH = '/oauth/authorize';
export const CSRF_FIELD = 'csrf';
export const DECISION_FIELD = 'decision';

/** The form token is bound to the session and to what is being consented to. */
export function consentPurpose(request: AuthorizeRequest): string {
  return ['consent', request.client.clientId, request.redirectUri, request.resource, request.codeChallenge, request.state ?? ''].join('\n');
}

export function sendConsentPage(deps: EdgeDeps, res: Response, request: AuthorizeRequest, session: SignedInPerson, gateway: Gateway): void {
  const fields = new Map<string, string>();
  for (const name of AUTHORIZE_PARAMETERS) {
    const value = request.params.get(name);
    if (value !== undefined) fields.set(name, value);
  }
  fields.set(CSRF_FIELD, formToken(session, consentPurpose(request)));
  const html = consentPage({
    instanceName: deps.settings.instanceName,
    client: request.client,
    redirectUri: request.redirectUri,
    gateway: { name: gateway.name || gateway.slug, slug: gateway.slug },
    personEmail: session.principal.email,
    action: AUTHORIZE_PATH,
    fields,
  });
  sendPage(res, 200, html, { formActionOrigins: [new URL(request.redirectUri).origin], hasForm: true });
}
