import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express, Request, Response } from 'express';
import { AppError } from '@platform/runtime';
import type { EdgeDeps } from '../edge-deps';
import { setRouteTemplate } from '../route-template';
import { answeredCors } from './cors';
import { sendOAuthError, sendTemporarilyUnavailable } from './oauth-errors';
import { overRateLimit, type OAuthEndpoint } from './rate-limits';

/** What serves a POST once it passed the rate limit; `clientAddress` is the one the limit counted. */
export type OAuthPostHandler = (req: IncomingMessage, res: ServerResponse, clientAddress: string) => Promise<void>;

/** A POST-only OAuth endpoint: its path, its §8 rate limit, and what serves its POST. */
export interface OAuthPostEndpoint {
  path: string;
  endpoint: OAuthEndpoint;
  handler: OAuthPostHandler;
}

/**
 * Answers a request to a POST-only OAuth endpoint that browser-based clients may call: CORS for any origin
 * (preflight answered), 405 with `Allow: POST` for other methods, the §8 rate limit per client address, and
 * RFC 6749 error JSON when a service fails. On node's own request and response: express serves revoke and
 * register through it (`mountPostEndpoint`), and the token endpoint is served by it ahead of express
 * (`token-endpoint.ts`). `clientAddressOf` is read once, for a POST only.
 */
export async function answerOAuthPost(
  deps: EdgeDeps,
  endpoint: OAuthPostEndpoint,
  req: IncomingMessage,
  res: ServerResponse,
  clientAddressOf: () => string,
): Promise<void> {
  if (answeredCors(req, res, 'POST')) return;
  if (req.method !== 'POST') return refuseMethod(req, res);
  const clientAddress = clientAddressOf();
  const retryAfter = await overRateLimit(deps, endpoint.endpoint, clientAddress);
  if (retryAfter !== null) {
    req.resume();
    return sendOAuthError(res, 'slow_down', `Too many requests; retry after ${retryAfter} seconds`, {
      status: 429,
      headers: { 'Retry-After': String(retryAfter) },
    });
  }
  try {
    await endpoint.handler(req, res, clientAddress);
  } catch (error) {
    // Too late for an OAuth error: the edge's error handling cuts the response.
    if (res.headersSent) throw error;
    answerServiceFailure(deps, endpoint.endpoint, res, error);
  }
}

/**
 * Mounts a POST-only OAuth endpoint on express (every method, so preflights and 405s are answered too). Failures
 * outside the OAuth shape (the rate limiter's cache, a response already started) reach the edge's error handler.
 */
export function mountPostEndpoint(app: Express, deps: EdgeDeps, endpoint: OAuthPostEndpoint): void {
  app.all(endpoint.path, (req: Request, res: Response) => {
    setRouteTemplate(res, endpoint.path);
    return answerOAuthPost(deps, endpoint, req, res, () => req.ip ?? '');
  });
}

/** Every method but POST and OPTIONS: 405 naming POST, in the OAuth error shape these endpoints always answer with. */
function refuseMethod(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  sendOAuthError(res, 'method_not_allowed', `Method ${req.method} is not allowed here; use POST`, {
    status: 405,
    headers: { Allow: 'POST' },
  });
}

/** A service's failure in the OAuth shape: its own slow_down and invalid_request, 503 when unavailable, else 500 (logged). */
function answerServiceFailure(deps: EdgeDeps, endpoint: OAuthEndpoint, res: ServerResponse, error: unknown): void {
  const appError = AppError.from(error);
  if (appError.httpStatus >= 500) deps.logger.error({ err: error, code: appError.code }, `oauth ${endpoint} failed`);
  if (appError.code === 'slow_down') return sendOAuthError(res, 'slow_down', appError.message, { status: 429, headers: appError.headers ?? {} });
  if (appError.code === 'invalid_request') return sendOAuthError(res, 'invalid_request', appError.message);
  if (appError.code === 'unavailable' || appError.code === 'deadline_exceeded' || appError.code === 'maintenance') return sendTemporarilyUnavailable(res);
  sendOAuthError(res, 'server_error', 'Internal error', { status: 500 });
}

/** An authentication scheme as RFC 9110 §11.1 spells it (a token); longer ones are not worth echoing. */
const AUTH_SCHEME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
/** Schemes named in their usual spelling (schemes are case-insensitive); any other is echoed as sent. */
const KNOWN_SCHEMES = ['Basic', 'Bearer'];

/** The challenge naming the scheme an Authorization header used, or null when it names no well-formed scheme. */
function challengeFor(header: string): string | null {
  const scheme = header.trim().split(/[ \t]+/)[0] ?? '';
  if (!AUTH_SCHEME.test(scheme)) return null;
  const known = KNOWN_SCHEMES.find((name) => name.toLowerCase() === scheme.toLowerCase());
  return `${known ?? scheme} realm="oauth"`;
}

const PUBLIC_CLIENTS_ONLY = 'Client authentication is not supported: this server has public clients only (token_endpoint_auth_method none)';

/**
 * Public clients only (`token_endpoint_auth_method` none): a client that tries to authenticate is refused with
 * invalid_client (RFC 6749 §5.2). With the Authorization header, the answer MUST be 401 with a `WWW-Authenticate`
 * challenge matching the scheme the client used; a header naming no well-formed scheme has nothing to match and,
 * like credentials in the body (client_secret, client_assertion), gets 400, which §5.2 allows there (a 401 would
 * need a challenge, and there is no scheme this server accepts to name). True when the response was sent.
 */
export function refusedClientAuthentication(req: IncomingMessage, res: ServerResponse, params: ReadonlyMap<string, string>): boolean {
  const header = req.headers.authorization;
  if (header !== undefined) {
    const challenge = challengeFor(header);
    sendOAuthError(res, 'invalid_client', PUBLIC_CLIENTS_ONLY, challenge ? { status: 401, headers: { 'WWW-Authenticate': challenge } } : { status: 400 });
    return true;
  }
  if (params.has('client_secret') || params.has('client_assertion') || params.has('client_assertion_type')) {
    sendOAuthError(res, 'invalid_client', PUBLIC_CLIENTS_ONLY, { status: 400 });
    return true;
  }
  return false;
}

/** The parameters an endpoint requires; answers invalid_request naming the first missing one. */
export function missingParameter(res: ServerResponse, params: ReadonlyMap<string, string>, names: readonly string[]): boolean {
  const missing = names.find((name) => !params.has(name));
  if (missing === undefined) return false;
  sendOAuthError(res, 'invalid_request', `${missing} is required`);
  return true;
}
