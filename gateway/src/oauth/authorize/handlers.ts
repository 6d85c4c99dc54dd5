import type { Express, NextFunction, Request, Response } from 'express';
import { AppError } from '@platform/runtime';
import type { EdgeDeps } from '../../edge-deps';
import { setRouteTemplate } from '../../route-template';
import { parseParams, readForm } from '../form-body';
import { sendConnectionErrorPage } from '../pages/error-page';
import { overRateLimit } from '../rate-limits';
import { sameOriginForm, signedInPerson, validFormToken, type SignedInPerson } from '../session';
import { AUTHORIZE_PATH, CSRF_FIELD, DECISION_FIELD, consentPurpose, sendConsentPage } from './consent-form';
import { issueCodeAndRedirect } from './issue-code';
import { redirectToClient } from './redirect';
import { MAX_AUTHORIZE_QUERY, authorizeQuery, establishRequest, type AuthorizeRequest } from './request';

/**
 * `GET /oauth/authorize` (§4.1.1) and the consent form's `POST /oauth/authorize`. Both run the same checks;
 * the POST re-validates every parameter it carries back (hidden fields are never trusted) before Allow or Deny.
 */
export function mountAuthorize(app: Express, deps: EdgeDeps): void {
  const issuer = deps.settings.appUrl;
  const page = (res: Response, problem: string, status = 400, headers?: Record<string, string>) =>
    sendConnectionErrorPage(res, { instanceName: deps.settings.instanceName, problem, status, ...(headers ? { headers } : {}) });

  /** Rate limit, then the checks of rule 6 and 7; the established request, or null once answered. */
  async function establish(res: Response, params: ReadonlyMap<string, string>, status: 302 | 303): Promise<AuthorizeRequest | null> {
    const established = await establishRequest(deps, params);
    if (established.kind === 'page') {
      page(res, established.problem);
      return null;
    }
    if (established.kind === 'redirect_error') {
      redirectToClient(res, {
        redirectUri: established.redirectUri,
        issuer,
        state: established.state,
        params: { error: established.error, error_description: established.description },
        status,
      });
      return null;
    }
    return established.request;
  }

  async function limited(req: Request, res: Response): Promise<boolean> {
    const retryAfter = await overRateLimit(deps, 'authorize', req.ip ?? '');
    if (retryAfter === null) return false;
    page(res, `Too many authorization requests from your address. Try again in ${retryAfter} seconds.`, 429, { 'Retry-After': String(retryAfter) });
    return true;
  }

  /** Not signed in: the sign-in page, which sends the browser back here (303) afterwards. */
  function toSignIn(res: Response, params: ReadonlyMap<string, string>): void {
    const returnTo = `${AUTHORIZE_PATH}?${authorizeQuery(params)}`;
    res.status(303).set({ Location: `/sign-in?return_to=${encodeURIComponent(returnTo)}`, 'Cache-Control': 'no-store' }).end();
  }

  /** Rule 8: the resource must be a gateway this person may use now; unknown, disabled and no access look alike. */
  async function gatewayFor(res: Response, request: AuthorizeRequest, session: SignedInPerson, status: 302 | 303) {
    const access = await deps.clients.catalog.checkGatewayAccess({ slug: request.slug, personId: session.personId });
    if (access.allowed && access.gateway) return access.gateway;
    redirectToClient(res, {
      redirectUri: request.redirectUri,
      issuer,
      state: request.state,
      params: { error: 'invalid_target', error_description: 'resource is not a gateway you may use' },
      status,
    });
    return null;
  }

  async function authorizeGet(req: Request, res: Response): Promise<void> {
    if (await limited(req, res)) return;
    const rawQuery = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?') + 1) : '';
    if (rawQuery.length > MAX_AUTHORIZE_QUERY) return page(res, `The request is too long (over ${MAX_AUTHORIZE_QUERY} characters).`);
    const parsed = parseParams(rawQuery);
    if (!parsed.ok) return page(res, `${parsed.problem}.`);
    const request = await establish(res, parsed.params, 302);
    if (!request) return;
    const session = await signedInPerson(deps, req);
    if (!session) return toSignIn(res, parsed.params);
    const gateway = await gatewayFor(res, request, session, 302);
    if (!gateway) return;
    // A trusted client is only ever a verified metadata-document client (identity guarantees it; checked again).
    if (request.client.trusted && request.client.verified) {
      return issueCodeAndRedirect(deps, req, res, { request, session, gatewayId: gateway.id, consent: 'trusted', status: 302 });
    }
    const consent = await deps.clients.identity.getConsent({ personId: session.personId, clientId: request.client.clientId, gatewayId: gateway.id });
    if (consent.remembered) {
      return issueCodeAndRedirect(deps, req, res, { request, session, gatewayId: gateway.id, consent: 'remembered', status: 302 });
    }
    sendConsentPage(deps, res, request, session, gateway);
  }

  async function authorizePost(req: Request, res: Response): Promise<void> {
    if (await limited(req, res)) return;
    const form = await readForm(req);
    if (!form.ok) return page(res, `${form.problem}.`);
    const params = new Map(form.params);
    const csrf = params.get(CSRF_FIELD);
    const decision = params.get(DECISION_FIELD);
    params.delete(CSRF_FIELD);
    params.delete(DECISION_FIELD);
    if (authorizeQuery(params).length > MAX_AUTHORIZE_QUERY) return page(res, `The request is too long (over ${MAX_AUTHORIZE_QUERY} characters).`);
    const request = await establish(res, params, 303);
    if (!request) return;
    const session = await signedInPerson(deps, req);
    if (!session) return toSignIn(res, params);
    if (!sameOriginForm(deps, req) || !validFormToken(session, consentPurpose(request), csrf)) {
      return page(res, 'This consent form has expired or did not come from this site. Start the connection again from the application.', 403);
    }
    const gateway = await gatewayFor(res, request, session, 303);
    if (!gateway) return;
    if (decision === 'allow') {
      return issueCodeAndRedirect(deps, req, res, { request, session, gatewayId: gateway.id, consent: 'allowed', status: 303 });
    }
    if (decision === 'deny') {
      return redirectToClient(res, {
        redirectUri: request.redirectUri,
        issuer,
        state: request.state,
        params: { error: 'access_denied', error_description: 'The person denied the request' },
        status: 303,
      });
    }
    page(res, 'The consent form did not say whether to allow or deny.');
  }

  /** Service failures on these browser routes are pages too (the error shape is for API clients). */
  const asPage = (handler: (req: Request, res: Response) => Promise<void>) => (req: Request, res: Response, next: NextFunction) => {
    setRouteTemplate(res, AUTHORIZE_PATH);
    handler(req, res).catch((error: unknown) => {
      if (res.headersSent || !(error instanceof AppError) || error.httpStatus < 500) return next(error);
      deps.logger.warn({ err: error, code: error.code }, 'authorize failed');
      page(res, 'The server could not complete the request right now. Please try again shortly.', error.httpStatus);
    });
  };

  app.get(AUTHORIZE_PATH, asPage(authorizeGet));
  app.post(AUTHORIZE_PATH, asPage(authorizePost));
}
