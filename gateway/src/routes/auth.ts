import { z } from 'zod';
import { AppError } from '@platform/runtime';
import { callerOf } from '../auth/caller';
import { clearSessionCookie, readCookies, sessionCookieName, setSessionCookie } from '../auth/cookies';
import { createRemembered } from '../auth/remembered';
import { secureCookies, type EdgeDeps } from '../edge-deps';
import { timestamp } from '../presenters/common';
import { authConfigSchema, meSchema, presentMe, type MeJson } from '../presenters/me';
import { personSchema, presentPerson } from '../presenters/person';
import { defineRoute, type AnyRouteDefinition } from '../route';

const NO_STORE = { 'Cache-Control': 'no-store' };
/** Keeps remembered `/v1/me` answers apart from anything else remembered about the same string. */
const ME_SCOPE = 'me';

/** Sign-in and sign-out of browser sessions, the signed-in person (`/v1/me`) and the sign-in configuration. */
export function authRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  const secure = secureCookies(deps.settings);
  // Who the caller is, remembered per person like authentications: every change that alters it (the person,
  // their memberships, their teams, a sign-in) moves the auth generation, so the next request asks again.
  const rememberMe = createRemembered<MeJson>({
    ...(deps.settings.authCacheSeconds > 0 ? { cache: deps.cache } : {}),
    ttlMs: deps.settings.authCacheSeconds * 1000,
    expiresAt: () => undefined,
  });
  return [
    defineRoute({
      method: 'post',
      path: '/v1/auth/sign-in',
      operationId: 'signIn',
      summary: 'Sign in with email and password',
      description:
        'Starts a browser session and sets its cookie (HttpOnly, SameSite=Lax; Secure with the `__Host-` prefix on https). ' +
        'Any failure answers 401 "Invalid email or password"; repeated failures per account or client address answer 429 `slow_down` with Retry-After.',
      tags: ['auth'],
      auth: { callers: 'anyone', anonymous: true },
      request: {
        body: z.object({ email: z.string().min(1).max(254), password: z.string().min(1).max(1024) }),
      },
      responses: {
        200: { description: 'Signed in; the session cookie is set', schema: z.object({ person: personSchema, expiresAt: timestamp }).meta({ id: 'SignedIn' }) },
        401: { description: 'Invalid email or password' },
        429: { description: 'Too many failed attempts; retry after Retry-After seconds' },
      },
      handler: async (ctx) => {
        const signedIn = await deps.clients.identity.signIn({
          email: ctx.body.email,
          password: ctx.body.password,
          clientIp: ctx.req.ip ?? '',
          userAgent: String(ctx.req.headers['user-agent'] ?? '').slice(0, 512),
          requestId: ctx.requestId,
        });
        setSessionCookie(ctx.res, signedIn.sessionToken, { secure, maxAgeSeconds: deps.settings.sessionTtlSeconds });
        return { data: { person: presentPerson(signedIn.person!), expiresAt: signedIn.expiresAt ?? '' }, headers: NO_STORE };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/sign-out',
      operationId: 'signOut',
      summary: 'Sign out: end this browser session',
      tags: ['auth'],
      auth: { callers: 'signed-in people (browser session)' },
      responses: { 204: { description: 'Signed out; the cookie is cleared' } },
      handler: async (ctx) => {
        const token = readCookies(ctx.req).get(sessionCookieName(secure)) ?? '';
        await deps.clients.identity.signOut({ sessionToken: token });
        clearSessionCookie(ctx.res, secure);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/me',
      operationId: 'getMe',
      summary: 'The signed-in person, their teams and roles, and the CSRF token',
      tags: ['auth'],
      auth: { callers: 'signed-in people (browser session or personal API key)', credentials: ['session', 'api_key'] },
      responses: { 200: { description: 'The caller', schema: meSchema } },
      handler: async (ctx) => {
        const caller = callerOf(ctx);
        if (!caller.personId) throw AppError.forbidden('Team service keys do not act as a person; use a personal key or sign in');
        const personId = caller.personId;
        // Remembered as presented, without the session's CSRF token (added per request, never shared).
        const me = await rememberMe(personId, ME_SCOPE, async () => presentMe(await deps.clients.identity.getMe({ personId }), null));
        return { data: caller.credential === 'session' ? { ...me, csrfToken: caller.csrfToken } : me, headers: NO_STORE };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/auth/config',
      operationId: 'getAuthConfig',
      summary: 'Sign-in methods and the installation identity',
      tags: ['auth'],
      auth: { callers: 'anyone', anonymous: true },
      responses: { 200: { description: 'How to sign in here', schema: authConfigSchema } },
      handler: async () => ({
        data: { instanceName: deps.settings.instanceName, appUrl: deps.settings.appUrl, signInMethods: ['password'] },
      }),
    }),
  ];
}
