import type { Express } from 'express';
import type { EdgeDeps } from '../edge-deps';
import type { AnyRouteDefinition } from '../route';
import { mountOAuth, oauthRoutes } from '../oauth';
import { mountSignInPage } from '../pages/sign-in';
import { apiKeyRoutes } from './api-keys';
import { auditRoutes } from './audit';
import { callRoutes } from './calls';
import { capabilityRoutes } from './capabilities';
import { gatewayRoutes } from './gateways';
import { authRoutes } from './auth';
import { maintenanceRoutes } from './maintenance';
import { mcpServerRoutes } from './mcp-servers';
import { adminMcpServerRoutes } from './admin-mcp-servers';
import { teamCatalogRoutes } from './team-catalog';
import { peopleRoutes } from './people';
import { publishingRoutes } from './publishing';
import { serviceAccountRoutes } from './service-accounts';
import { teamRoutes } from './teams';

/** Every `/v1` route of the platform, grouped by area (one file each). */
export function v1Routes(deps: EdgeDeps): AnyRouteDefinition[] {
  return [
    ...authRoutes(deps),
    ...peopleRoutes(deps),
    ...teamRoutes(deps),
    ...apiKeyRoutes(deps),
    ...serviceAccountRoutes(deps),
    ...auditRoutes(deps),
    ...maintenanceRoutes(deps),
    ...gatewayRoutes(deps),
    ...mcpServerRoutes(deps),
    ...capabilityRoutes(deps),
    ...publishingRoutes(deps),
    ...adminMcpServerRoutes(deps),
    ...teamCatalogRoutes(deps),
    ...callRoutes(deps),
    ...oauthRoutes(deps),
  ];
}

/** Routes outside `/v1`: browser pages, and later OAuth, discovery and the MCP gateway. */
export function mountNonApiRoutes(deps: EdgeDeps): (app: Express) => void {
  return (app) => {
    mountSignInPage(app, deps);
    mountOAuth(app, deps);
  };
}
