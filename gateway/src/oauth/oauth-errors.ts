import type { ServerResponse } from 'node:http';
import { sendNoStoreJson } from './no-store';

/**
 * An OAuth error in RFC 6749 §5.2's JSON shape: `{error, error_description}`. `invalid_client` is 401 (§5.2),
 * everything else the given status (400 by default). The description never carries a token.
 */
export function sendOAuthError(
  res: ServerResponse,
  error: string,
  description: string,
  options: { status?: number; headers?: Record<string, string> } = {},
): void {
  const status = options.status ?? (error === 'invalid_client' ? 401 : 400);
  sendNoStoreJson(res, status, JSON.stringify({ error, error_description: description }), options.headers);
}
