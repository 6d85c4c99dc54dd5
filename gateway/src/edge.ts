import type { Express } from 'express';
import { createEdgeApp } from './app';
import { createAuthenticator } from './auth/authenticate';
import type { EdgeDeps } from './edge-deps';
import { mountNonApiRoutes, v1Routes } from './routes';
import type { ReadinessReport } from '@platform/runtime';

/** The platform's edge: every route, the authentication hook and the browser pages on one express app. */
export function createEdge(deps: EdgeDeps, options: { bodyLimitBytes: number; trustProxy?: string; readiness: () => Promise<ReadinessReport> }): Express {
  return createEdgeApp({
    config: {
      appUrl: deps.settings.appUrl,
      bodyLimitBytes: options.bodyLimitBytes,
      instanceName: deps.settings.instanceName,
      ...(options.trustProxy !== undefined ? { trustProxy: options.trustProxy } : {}),
    },
    logger: deps.logger,
    readiness: options.readiness,
    routes: v1Routes(deps),
    authenticate: createAuthenticator({
      identity: deps.clients.identity,
      appUrl: deps.settings.appUrl,
      rateLimiter: deps.rateLimiter,
      apiKeyRateLimit: { limit: deps.settings.apiKeyRateLimitPerMinute, windowMs: 60_000 },
      ...(deps.settings.authCacheSeconds > 0 ? { cache: deps.cache, cacheTtlMs: deps.settings.authCacheSeconds * 1000 } : {}),
    }),
    mount: mountNonApiRoutes(deps),
  });
}
