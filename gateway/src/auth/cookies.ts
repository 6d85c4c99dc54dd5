import type { Request, Response } from 'express';

/**
 * The browser session cookie: HttpOnly, SameSite=Lax, and on https installs Secure with the `__Host-` prefix
 * (which pins it to this host and path `/`).
 */
export interface SessionCookieOptions {
  secure: boolean;
  maxAgeSeconds: number;
}

export function sessionCookieName(secure: boolean): string {
  return secure ? '__Host-platform_session' : 'platform_session';
}

/** Cookie values by name from the Cookie header (first value wins, as browsers send the most specific first). */
export function readCookies(req: Request): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index <= 0) continue;
    const name = part.slice(0, index).trim();
    if (!cookies.has(name)) cookies.set(name, part.slice(index + 1).trim());
  }
  return cookies;
}

export function setSessionCookie(res: Response, token: string, options: SessionCookieOptions): void {
  res.append('Set-Cookie', serialize(sessionCookieName(options.secure), token, options.maxAgeSeconds, options.secure));
}

export function clearSessionCookie(res: Response, secure: boolean): void {
  res.append('Set-Cookie', serialize(sessionCookieName(secure), '', 0, secure));
}

function serialize(name: string, value: string, maxAgeSeconds: number, secure: boolean): string {
  return [`${name}=${value}`, 'Path=/', `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Lax', ...(secure ? ['Secure'] : [])].join('; ');
}
