import { canonicalResourceUrl } from '@platform/runtime';
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
 * The gateway slug a `resource` parameter names, when it equals `{APP_URL}/mcp/{slug}` after canonicalisation
 * with a well-formed slug; null otherwise (→ invalid_target). Identity compares the token request's `resource`
 * in the same canonical form, so a value accepted here is accepted there.
 */
export function slugOfResource(appUrl: string, resource: string): string | null {
  const canonical = canonicalResourceUrl(resource);
  const base = canonicalResourceUrl(`${appUrl}/mcp/`);
  if (!canonical || !base || !canonical.startsWith(base)) return null;
  const slug = canonical.slice(base.length);
  return isSlug(slug) ? slug : null;
}
