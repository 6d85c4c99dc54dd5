import type { Request } from 'express';
import type { AuthenticateRequest, AuthenticateResponse, IdentityServiceClient } from '@platform/proto/gen/platform/identity/v1/identity';
import { PrincipalKind } from '@platform/proto/gen/platform/identity/v1/identity';
import {
  AppError,
  constantTimeEqual,
  rateLimitError,
  type AsyncClient,
  type Cache,
  type RateLimiter,
  type RateLimitRule,
} from '@platform/runtime';
import { ACCESS_TOKEN_PREFIX, API_KEY_PREFIX } from './credential-prefixes';
import { createRemembered } from './remembered';
import type { AnyRouteDefinition } from '../route';
import { parseTeamRef } from '../team-ref';
import type { Caller } from './caller';
import { readCookies, sessionCookieName } from './cookies';
import { authorize, type RoutePolicy } from './policy';
import { platformRoleName, teamRoleName } from './roles';

export interface AuthenticatorOptions {
  identity: Pick<AsyncClient<IdentityServiceClient>, 'authenticate'>;
  /** The public address: decides the cookie name and the one Origin browser writes may come from. */
  appUrl: string;
  rateLimiter: RateLimiter;
  /** Requests an API key may make per window (§8: 300 per minute by default). */
  apiKeyRateLimit: RateLimitRule;
  /** The shared cache holding the auth generation; with it, answers are remembered between requests. */
  cache?: Cache;
  /** How long an answer may be remembered at most. */
  cacheTtlMs?: number;
}

type Credential = NonNullable<AuthenticateRequest['credential']>;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The edge's `authenticate` hook: finds the credential (a Bearer API key, or the session cookie), asks the
 * identity service who it belongs to (and, on team routes, how it reaches the team), applies the per-key rate
 * limit and the CSRF/Origin rule for browser writes, then lets the route's policy decide.
 */
export function createAuthenticator(options: AuthenticatorOptions) {
  const secure = new URL(options.appUrl).protocol === 'https:';
  const appOrigin = new URL(options.appUrl).origin;
  const remember = createRemembered<AuthenticateResponse>({
    ...(options.cache ? { cache: options.cache } : {}),
    ttlMs: options.cacheTtlMs ?? 10_000,
    expiresAt: (response) => response.principal?.expiresAt,
  });
  /** Who the credential is: remembered while the auth generation is unchanged, else asked of identity. */
  const identify = (credential: Credential, teamRef: string): Promise<AuthenticateResponse> =>
    remember(credential.value, teamRef, () => options.identity.authenticate({ credential, teamRef }));

  return async (req: Request, route: AnyRouteDefinition): Promise<Caller | null> => {
    const policy = route.auth as RoutePolicy;
    const hasTeamParam = route.path.includes('{team}');
    const credential = readCredential(req, secure);
    if (!credential) {
      authorize(policy, null, req.path, hasTeamParam);
      return null;
    }
    const teamRef = hasTeamParam ? String(req.params.team ?? '') : '';
    if (teamRef) parseTeamRef(teamRef); // a malformed slug or id cannot name a team: 404 before any lookup

    let response: AuthenticateResponse;
    try {
      response = await identify(credential, teamRef);
    } catch (error) {
      // A browser keeps an ended session's cookie; it must not stop that browser from signing in again.
      if (policy.anonymous && credential.$case === 'sessionToken' && error instanceof AppError && error.code === 'unauthenticated') return null;
      throw error;
    }
    const caller = toCaller(response, req.ip ?? '');
    if (caller.credential === 'api_key') {
      const decision = await options.rateLimiter.consume(`api-key:${caller.principal.apiKeyId}`, options.apiKeyRateLimit);
      if (!decision.allowed) throw rateLimitError(decision);
    } else if (!SAFE_METHODS.has(req.method)) {
      assertSameOriginWrite(req, caller, appOrigin);
    }
    authorize(policy, caller, req.path, hasTeamParam);
    return caller;
  };
}

/** A Bearer credential wins over the cookie; a Bearer token that is not an API key is refused by /v1. */
function readCredential(req: Request, secure: boolean): Credential | null {
  const header = req.headers.authorization;
  if (header !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw AppError.unauthenticated('Malformed Authorization header; use "Bearer <API key>"');
    const token = match[1]!;
    if (token.startsWith(API_KEY_PREFIX)) return { $case: 'apiKey', value: token };
    if (token.startsWith(ACCESS_TOKEN_PREFIX)) throw AppError.unauthenticated('OAuth access tokens are accepted only by their MCP gateway');
    throw AppError.unauthenticated('Unknown credential');
  }
  const session = readCookies(req).get(sessionCookieName(secure));
  return session ? { $case: 'sessionToken', value: session } : null;
}

function toCaller(response: AuthenticateResponse, clientIp: string): Caller {
  const principal = response.principal;
  if (!principal) throw AppError.unauthenticated();
  const access = response.teamAccess;
  return {
    credential: principal.kind === PrincipalKind.PRINCIPAL_KIND_API_KEY ? 'api_key' : 'session',
    principal,
    personId: principal.personId || null,
    platformRole: principal.kind === PrincipalKind.PRINCIPAL_KIND_SESSION ? platformRoleName(principal.platformRole) : null,
    scopes: principal.scopes,
    apiKeyTeamId: principal.apiKeyTeamId || null,
    team: access?.team ? { team: access.team, role: teamRoleName(access.role), via: access.via } : null,
    csrfToken: response.csrfToken || null,
    clientIp,
  };
}

/**
 * Browser writes must prove they come from this installation's own pages: the session's CSRF token in
 * X-CSRF-Token and an Origin equal to APP_URL's origin (§5.3).
 */
function assertSameOriginWrite(req: Request, caller: Caller, appOrigin: string): void {
  const token = req.headers['x-csrf-token'];
  if (typeof token !== 'string' || !caller.csrfToken || !constantTimeEqual(token, caller.csrfToken)) {
    throw new AppError('csrf_failed', 'Missing or wrong X-CSRF-Token header (get it from GET /v1/me)');
  }
  if (req.headers.origin !== appOrigin) {
    throw new AppError('csrf_failed', 'Cross-origin write refused: the Origin header must be this installation\'s address');
  }
}
