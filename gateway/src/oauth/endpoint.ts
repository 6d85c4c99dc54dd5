import type { Express, Request, Response } from 'express';
import { AppError } from '@platform/runtime';
import type { EdgeDeps } from '../edge-deps';
import { setRouteTemplate } from '../route-template';
import { allowAnyOrigin } from './cors';
import { sendOAuthError } from './oauth-errors';
import { overRateLimit, type OAuthEndpoint } from './rate-limits';

/**
 * Mounts a POST-only OAuth endpoint that browser-based clients may call: CORS for any origin (preflight
 * answered), the §8 rate limit per client address, 405 with `Allow: POST` for other methods, and RFC 6749
 * error JSON when a service fails.
 */
export function mountPostEndpoint(
  app: Express,
  deps: EdgeDeps,
  options: { path: string; endpoint: OAuthEndpoint; handler: (req: Request, res: Response) => Promise<void> },
): void {
  const cors = allowAnyOrigin('POST');
  const template = (_req: Request, res: Response, next: () => void) => {
    setRouteTemplate(res, options.path);
    next();
  };
  app.options(options.path, template, cors);
  app.post(options.path, template, cors, async (req: Request, res: Response) => {
    const retryAfter = await overRateLimit(deps, options.endpoint, req);
    if (retryAfter !== null) {
      req.resume();
      return sendOAuthError(res, 'slow_down', `Too many requests; retry after ${retryAfter} seconds`, {
        status: 429,
        headers: { 'Retry-After': String(retryAfter) },
      });
    }
    try {
      await options.handler(req, res);
    } catch (error) {
      if (res.headersSent) throw error;
      const appError = AppError.from(error);
      if (appError.httpStatus >= 500) deps.logger.error({ err: error, code: appError.code }, `oauth ${options.endpoint} failed`);
      if (appError.code === 'slow_down') return sendOAuthError(res, 'slow_down', appError.message, { status: 429, headers: appError.headers ?? {} });
      if (appError.code === 'invalid_request') return sendOAuthError(res, 'invalid_request', appError.message);
      if (appError.code === 'unavailable' || appError.code === 'deadline_exceeded' || appError.code === 'maintenance') {
        return sendOAuthError(res, 'temporarily_unavailable', 'The server is temporarily unavailable; try again shortly', { status: 503 });
      }
      sendOAuthError(res, 'server_error', 'Internal error', { status: 500 });
    }
  });
  // Every other method: 405 naming POST, in the OAuth error shape these endpoints always answer with.
  app.all(options.path, template, cors, (req: Request, res: Response) => {
    req.resume();
    sendOAuthError(res, 'method_not_allowed', `Method ${req.method} is not allowed here; use POST`, {
      status: 405,
      headers: { Allow: 'POST' },
    });
  });
}

/**
 * Public clients only (`token_endpoint_auth_method` none): a client that tries to authenticate, with HTTP Basic
 * or a client secret or assertion, is refused with invalid_client (RFC 6749 §5.2: 401, and `WWW-Authenticate`
 * when it used the Authorization header). True when the response was sent.
 */
export function refusedClientAuthentication(req: Request, res: Response, params: ReadonlyMap<string, string>): boolean {
  const header = req.headers.authorization;
  if (header !== undefined) {
    const scheme = header.trim().split(/\s+/)[0] ?? '';
    const challenge = /^basic$/i.test(scheme) ? 'Basic realm="oauth"' : undefined;
    sendOAuthError(res, 'invalid_client', 'Client authentication is not supported: this server has public clients only (token_endpoint_auth_method none)', {
      status: 401,
      ...(challenge ? { headers: { 'WWW-Authenticate': challenge } } : {}),
    });
    return true;
  }
  if (params.has('client_secret') || params.has('client_assertion') || params.has('client_assertion_type')) {
    sendOAuthError(res, 'invalid_client', 'Client authentication is not supported: this server has public clients only (token_endpoint_auth_method none)', { status: 401 });
    return true;
  }
  return false;
}

/** The parameters an endpoint requires; answers invalid_request naming the first missing one. */
export function missingParameter(res: Response, params: ReadonlyMap<string, string>, names: readonly string[]): boolean {
  const missing = names.find((name) => !params.has(name));
  if (missing === undefined) return false;
  sendOAuthError(res, 'invalid_request', `${missing} is required`);
  return true;
}
