import type { Express } from 'express';
import type { EdgeDeps } from '../edge-deps';
import type { AnyRouteDefinition } from '../route';
import { mountAuthorize } from './authorize/handlers';
import { mountConnectedAppsPage } from './connected-apps';
import { connectionRoutes } from './connections';
import { mountJwks } from './jwks';
import { mountDiscovery } from './metadata';
import { mountRegister } from './register';
import { mountRevoke } from './revoke';
import { mountToken } from './token';
import { trustedClientRoutes } from './trusted-clients';

export { createGatewayTokenCheck, type McpPrincipal } from './resource-server';

/**
 * The OAuth 2.1 authorization server of the MCP gateways (§4.1) outside `/v1`: discovery documents, authorize
 * and consent, token, registration and revocation and the connected-apps page (the resource-server check of
 * `/mcp/{slug}` is resource-server.ts, used by the data plane). Decisions are written down in docs/oauth.md.
 */
export function mountOAuth(app: Express, deps: EdgeDeps): void {
  mountDiscovery(app, deps);
  mountJwks(app, deps);
  mountAuthorize(app, deps);
  mountToken(app, deps);
  mountRegister(app, deps);
  mountRevoke(app, deps);
  mountConnectedAppsPage(app, deps);
}

/** Connected apps and trusted clients under `/v1`. */
export function oauthRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  return [...connectionRoutes(deps), ...trustedClientRoutes(deps)];
}
