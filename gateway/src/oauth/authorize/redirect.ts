import type { Response } from 'express';

/**
 * Sends the browser back to the client's redirect URI with the response parameters, `state` when the request
 * had one, and `iss` (RFC 9207, mix-up defence). Parameters already in the registered URI are kept.
 */
export function redirectToClient(
  res: Response,
  options: { redirectUri: string; issuer: string; state: string | undefined; params: Record<string, string>; status: 302 | 303 },
): void {
  const target = new URL(options.redirectUri);
  for (const [name, value] of Object.entries(options.params)) target.searchParams.append(name, value);
  if (options.state !== undefined) target.searchParams.append('state', options.state);
  target.searchParams.append('iss', options.issuer);
  res.status(options.status).set({ Location: target.toString(), 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' }).end();
}
