import type { ServerResponse } from 'node:http';
import { sendNoStoreJson } from './no-store';

/**
 * An OAuth error in RFC 6749 §5.2's JSON shape: `{error, error_description}`, with the given status (400 by
 * default, `invalid_client` too: a 401 must carry a `WWW-Authenticate` challenge, so its caller sets both, see
 * `refusedClientAuthentication`). The description never carries a token.
 */
export function sendOAuthError(
  res: ServerResponse,
  error: string,
  description: string,
  options: { status?: number; headers?: Record<string, string> } = {},
): void {
  sendNoStoreJson(res, options.status ?? 400, JSON.stringify({ error, error_description: description }), options.headers);
}

/** 503 `temporarily_unavailable`: what an endpoint needs cannot answer now (a service unavailable); the client may retry. */
export function sendTemporarilyUnavailable(res: ServerResponse): void {
  sendOAuthError(res, 'temporarily_unavailable', 'The server is temporarily unavailable; try again shortly', { status: 503 });
}
