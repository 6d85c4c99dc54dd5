/**
 * Redirect URI matching (§4.1.2, RFC 8252 §7.3, OAuth 2.1 §8.4.2): the edge applies it to the authorize request
 * before any redirect (rule 6) and identity again before it issues a code, so both must give the same answer.
 */

/** Loopback hosts as the URL parser spells them: 127.0.0.0/8, [::1], localhost (RFC 8252 §7.3). */
export function isLoopbackHost(hostname: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname) || hostname === '[::1]' || hostname === 'localhost';
}

/** The raw URI without the port of an http loopback authority; null for any other URI. */
function loopbackWithoutPort(value: string): string | null {
  const match = /^(http:\/\/)(\[::1\]|[^/?#:@[\]\\]+)(?::\d{1,5})?([/?].*)?$/i.exec(value);
  if (!match) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' || !isLoopbackHost(url.hostname)) return null;
  return `${match[1]}${match[2]}${match[3] ?? ''}`;
}

/**
 * Whether `requested` is one of the client's redirect URIs: exact string comparison, except that an http
 * loopback URI may name any port (native apps pick a free port at run time; the AS "MUST allow any port to be
 * specified at the time of the request for loopback IP redirect URIs"). Everything else about it — scheme, host
 * as written, path, query — must still be exactly what was registered.
 */
export function redirectUriRegistered(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const portless = loopbackWithoutPort(requested);
  return portless !== null && registered.some((uri) => loopbackWithoutPort(uri) === portless);
}
