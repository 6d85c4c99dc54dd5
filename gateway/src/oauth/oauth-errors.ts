import type { Response } from 'express';

/** Token responses and OAuth errors must never be cached (RFC 6749 §5.1, OAuth 2.1 §3.2.3). */
export const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;

/**
 * An OAuth error in RFC 6749 §5.2's JSON shape: `{error, error_description}`. `invalid_client` is 401 (§5.2),
 * everything else the given status (400 by default). The description never carries a token.
 */
export function sendOAuthError(
  res: Response,
  error: string,
  description: string,
  options: { status?: number; headers?: Record<string, string> } = {},
): void {
  const status = options.status ?? (error === 'invalid_client' ? 401 : 400);
  res
    .status(status)
    .set({ ...NO_STORE, ...(options.headers ?? {}) })
    .json({ error, error_description: description });
}
