/**
 * A resource indicator (RFC 8707) in canonical form for comparison: scheme and host lowercased and the default
 * port dropped (the WHATWG parser does both), path kept exactly. Null when it is not an absolute http(s) URL or
 * carries a query, fragment or credentials (a resource indicator must not, RFC 8707 §2). The edge compares the
 * authorize request's `resource` in this form and identity the token request's, so a value accepted at one is
 * accepted at the other.
 */
export function canonicalResourceUrl(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  if (url.username || url.password || url.search || url.hash || value.includes('#') || value.includes('?')) return null;
  // The path is compared exactly: one the parser had to normalise (dot segments, escapes, tabs) is not the same path.
  if (rawPathOf(value) !== url.pathname) return null;
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/**
 * The path as written: what follows `scheme://authority`, before any query or fragment (null when the value is not
 * written so, or holds anything but visible ASCII, which the parser would drop or encode). Comparing only the value's
 * end with the parsed path let `/a/../mcp/x` pass as `/mcp/x`.
 */
function rawPathOf(value: string): string | null {
  if (!/^[\x21-\x7e]+$/.test(value)) return null;
  const authority = value.indexOf('//');
  if (authority < 0) return null;
  const path = value.indexOf('/', authority + 2);
  return path < 0 ? '' : value.slice(path);
}

/** Whether two resource indicators name the same resource (both canonicalised; an invalid one matches nothing). */
export function sameResource(a: string, b: string): boolean {
  const canonical = canonicalResourceUrl(a);
  return canonical !== null && canonical === canonicalResourceUrl(b);
}
