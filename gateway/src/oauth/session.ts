import { createHmac } from 'node:crypto';
import type { Request } from 'express';
import { PrincipalKind, type Principal } from '@platform/proto/gen/platform/identity/v1/identity';
import { AppError, constantTimeEqual } from '@platform/runtime';
import { readCookies, sessionCookieName } from '../auth/cookies';
import { secureCookies, type EdgeDeps } from '../edge-deps';

/** The person signed in with this browser, and the session's CSRF token. */
export interface SignedInPerson {
  principal: Principal;
  personId: string;
  csrfToken: string;
}

/** The browser's session, or null when there is none or it ended (then the person signs in again). */
export async function signedInPerson(deps: EdgeDeps, req: Request): Promise<SignedInPerson | null> {
  const token = readCookies(req).get(sessionCookieName(secureCookies(deps.settings)));
  if (!token) return null;
  try {
    const response = await deps.clients.identity.authenticate({ credential: { $case: 'sessionToken', value: token }, teamRef: '' });
    const principal = response.principal;
    if (!principal || principal.kind !== PrincipalKind.PRINCIPAL_KIND_SESSION || !principal.personId) return null;
    return { principal, personId: principal.personId, csrfToken: response.csrfToken };
  } catch (error) {
    if (error instanceof AppError && error.code === 'unauthenticated') return null;
    throw error;
  }
}

/**
 * A form token for one purpose, derived from the session's CSRF token (HMAC keyed by it): a page's form
 * carries it, and the POST recomputes it from the same session. A token of another session or purpose fails.
 */
export function formToken(session: SignedInPerson, purpose: string): string {
  return createHmac('sha256', session.csrfToken).update(`oauth-form\n${purpose}`).digest('base64url');
}

export function validFormToken(session: SignedInPerson, purpose: string, sent: string | undefined): boolean {
  if (!sent || !session.csrfToken) return false;
  return constantTimeEqual(sent, formToken(session, purpose));
}

/** A browser form POST must come from this installation's pages when the browser says where it came from. */
export function sameOriginForm(deps: EdgeDeps, req: Request): boolean {
  const origin = req.headers.origin;
  return origin === undefined || origin === new URL(deps.settings.appUrl).origin;
}
