import type { Gateway } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { AppError } from '@platform/runtime';
import type { EdgeDeps } from '../edge-deps';
import { ACCESS_TOKEN_PREFIX, API_KEY_PREFIX } from '../auth/credential-prefixes';
import { createRemembered } from '../auth/remembered';
import { isSlug } from '../slug';
import { protectedResourceMetadataUrl } from './resource';

/** Who is calling a gateway, as the resource-server check admitted them. */
export interface McpPrincipal {
  personId: string;
  email: string;
  displayName: string;
  connectionId: string;
  clientId: string;
  clientName: string;
  clientVerified: boolean;
  gateway: Gateway;
  /** When the access token expires. */
  tokenExpiresAt?: string;
}

const API_KEY_REFUSED =
  'API keys are not accepted by MCP gateways: connect with an OAuth access token of this installation, which an MCP ' +
  'client obtains through the authorization server that WWW-Authenticate names';

/**
 * The resource-server check of `/mcp/:slug` (§5.5), run on every request. With AUTH_CACHE_SECONDS the answer
 * is remembered only while the shared auth generation is unchanged (every revocation, suspension, removal or
 * person change moves it), so those still take effect at the next request on every replica:
 * - malformed slug → 404;
 * - no Bearer token → 401 with `WWW-Authenticate: Bearer resource_metadata="…"` (RFC 9728 §5.1), which is how
 *   MCP clients discover this server;
 * - an API key → the same 401 with `error="invalid_token"`, its message saying that gateways take OAuth tokens;
 * - a token that is not a valid access token of this gateway (unknown, expired, revoked, another gateway's,
 *   its connection ended or its person inactive) → the same 401 plus `error="invalid_token"` (RFC 6750 §3.1);
 * - a valid token whose person may no longer use the gateway → 404.
 */
export function createGatewayTokenCheck(deps: EdgeDeps): (slug: string, authorization: string | undefined) => Promise<McpPrincipal> {
  const remember = createRemembered<McpPrincipal>({
    ...(deps.settings.authCacheSeconds > 0 ? { cache: deps.cache } : {}),
    ttlMs: deps.settings.authCacheSeconds * 1000,
    expiresAt: (principal) => principal.tokenExpiresAt,
  });
  return (slug, authorization) => check(deps, remember, slug, authorization);
}

type Remember = ReturnType<typeof createRemembered<McpPrincipal>>;

async function check(deps: EdgeDeps, remember: Remember, slug: string, authorization: string | undefined): Promise<McpPrincipal> {
  if (!isSlug(slug)) throw AppError.notFound('Gateway');
  // Only refusals need the metadata URL.
  const metadata = () => protectedResourceMetadataUrl(deps.settings.appUrl, slug);
  const token = bearerToken(authorization);
  if (token === null) throw unauthorized(metadata(), false, 'An access token is required');
  // Scripts reach for the API key they use on /v1 first: say what this endpoint takes instead.
  if (token.startsWith(API_KEY_PREFIX)) throw unauthorized(metadata(), true, API_KEY_REFUSED);
  if (!token.startsWith(ACCESS_TOKEN_PREFIX)) throw unauthorized(metadata(), true, 'The access token is not valid for this gateway');

  return remember(token, slug, async () => {
    const validated = await deps.clients.identity.validateAccessToken({ token, gatewaySlug: slug });
    if (!validated.valid) throw unauthorized(metadata(), true, 'The access token is not valid for this gateway');
    const access = await deps.clients.catalog.checkGatewayAccess({ slug, personId: validated.personId });
    if (!access.allowed || !access.gateway) throw AppError.notFound('Gateway');
    // The slug may have been given to a new gateway since the token was issued: the token is not for this one.
    if (access.gateway.id !== validated.gatewayId) throw unauthorized(metadata(), true, 'The access token is not valid for this gateway');
    return {
      personId: validated.personId,
      email: validated.email,
      displayName: validated.displayName,
      connectionId: validated.connectionId,
      clientId: validated.clientId,
      clientName: validated.clientName,
      clientVerified: validated.clientVerified,
      gateway: access.gateway,
      ...(validated.expiresAt ? { tokenExpiresAt: validated.expiresAt } : {}),
    };
  });
}

/** The token of an `Authorization: Bearer <token>` header; null when there is none (or another scheme). */
function bearerToken(header: string | undefined): string | null {
  if (header === undefined) return null;
  const match = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)[ ]*$/i.exec(header);
  if (match) return match[1]!;
  // A Bearer header with a malformed token still counts as a token sent (→ invalid_token).
  return /^Bearer(\s|$)/i.test(header) ? '' : null;
}

function unauthorized(metadataUrl: string, tokenSent: boolean, message: string): AppError {
  const challenge = `Bearer resource_metadata="${metadataUrl}"${tokenSent ? ', error="invalid_token"' : ''}`;
  return new AppError('unauthenticated', message, { headers: { 'WWW-Authenticate': challenge } });
}
