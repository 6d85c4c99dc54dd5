import type { EdgeDeps } from '../edge-deps';
import type { AnyRouteDefinition } from '../route';
import { v1Routes } from './index';

/**
 * Every `/v1` route without a running platform, for documentation and checks: routes only use their deps when
 * they serve a request, so building them with none is safe.
 */
export function routeCatalogue(): AnyRouteDefinition[] {
  const settings = { appUrl: 'http://localhost:8080', instanceName: 'MCP Platform', sessionTtlSeconds: 43200, apiKeyRateLimitPerMinute: 300, authCacheSeconds: 0 };
  return v1Routes({ settings } as EdgeDeps);
}

/** The markdown rows of docs/api.md's route table. */
export function routeTableRows(): string[] {
  return routeCatalogue().map((route) => `| \`${route.method.toUpperCase()} ${route.path}\` | ${route.auth.callers} | ${route.summary} |`);
}
