import type { RequestListener } from 'node:http';
import { createEdgeApp } from './app';
import { createAuthenticator } from './auth/authenticate';
import { compileTrustProxy } from './client-address';
import type { EdgeDeps } from './edge-deps';
import { onEdgeDrain, onEdgeStop } from './edge-stop';
import { createMcpEndpoint } from './mcp/endpoint';
import { createTokenEndpoint } from './oauth/token-endpoint';
import { mountNonApiRoutes, v1Routes } from './routes';

/**
 * The platform's edge as one request listener: the MCP endpoint `/mcp/{slug}` and the OAuth token endpoint (the hot
 * paths, served without express), then every other route, the authentication hook and the browser pages on one
 * express app.
 */
export function createEdge(deps: EdgeDeps, options: { bodyLimitBytes: number; trustProxy?: string; checkResponses?: boolean }): RequestListener {
  // Compiled once and shared, so express's `req.ip` and the token endpoint name the same client.
  const trustProxy = compileTrustProxy(options.trustProxy);
  const app = createEdgeApp({
    config: {
      appUrl: deps.settings.appUrl,
      bodyLimitBytes: options.bodyLimitBytes,
      instanceName: deps.settings.instanceName,
      trustProxy,
      checkResponses: options.checkResponses ?? false,
    },
    logger: deps.logger,
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
  const mcp = createMcpEndpoint(deps);
  const token = createTokenEndpoint(deps, { trustProxy });
  const edge: RequestListener = (req, res) => {
    if (!mcp.serve(req, res) && !token.serve(req, res)) app(req, res);
  };
  // When the listener begins draining, the MCP endpoint ends its GET streams (they would hold the drain for its whole
  // grace); when the edge stops, after the drain, it closes (flushing call records).
  onEdgeDrain(edge, () => mcp.drain());
  onEdgeStop(edge, () => mcp.close());
  return edge;
}
