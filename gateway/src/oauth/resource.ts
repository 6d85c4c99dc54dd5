import { isSlug } from '../slug';

/** The resource identifier (RFC 8707) of a gateway: `{APP_URL}/mcp/{slug}`. */
export function gatewayResource(appUrl: string, slug: string): string {
  return `${appUrl}/mcp/${slug}`;
}

/** The protected-resource metadata address (RFC 9728 §3.1: the well-known path inserted before the resource path). */
export function protectedResourceMetadataUrl(appUrl: string, slug: string): string {
  const app = new URL(appUrl);
  const basePath = app.pathname.replace(/\/+$/, '');
  return `${app.origin}/.well-known/oauth-protected-resource${basePath}/mcp/${slug}`;
}

/**
 * A URL in canonical form for comparison: scheme and host lowercased and the default port dropped (the WHATWG
 * parser does both), no query, no fragment, path kept exactly. Null when it is not an absolute http(s) URL or
 * carries a query, fragment or credentials (a resource indicator must not, RFC 8707 §2).
 */
export function canonicalUrl(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  if (url.username || url.password || url.search || url.hash || value.includes('#') || value.includes('?')) return null;
  // The path is compared exactly: one the parser had to normalise (dot segments, escapes) is not the same path.
  if (!value.endsWith(url.pathname)) return null;
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/**
 * The gateway slug a `resource` parameter names, when it equals `{APP_URL}/mcp/{slug}` after canonicalisation
 * with a well-formed slug; null otherwise (→ invalid_target).
 */
export function slugOfResource(appUrl: string, resource: string): string | null {
  const canonical = canonicalUrl(resource);
  const base = canonicalUrl(`${appUrl}/mcp/`);
  if (!canonical || !base || !canonical.startsWith(base)) return null;
  const slug = canonical.slice(base.length);
  return isSlug(slug) ? slug : null;
}
