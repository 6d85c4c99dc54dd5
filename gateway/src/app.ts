import express, { type Express, type Request, type Response } from 'express';
import { accessLogMiddleware } from './access-log';
import { compileTrustProxy, type TrustProxy, type TrustProxySetting } from './client-address';
import { errorHandler } from './error-handler';
import { jsonBodyMiddleware } from './json-body';
import { notFoundHandler } from './not-found';
import { buildOpenApiDocument } from './openapi';
import { livenessHandler, type Logger } from '@platform/runtime';
import { requestIdMiddleware } from './request-id';
import { toExpressPath, type AnyRouteDefinition } from './route';
import { routeHandler, type Authenticate } from './route-handler';
import { setRouteTemplate } from './route-template';
import { serverSpanMiddleware } from './server-span';

export interface EdgeConfig {
  /** The public address; the OpenAPI document's server. */
  appUrl: string;
  bodyLimitBytes: number;
  /**
   * express `trust proxy`: true, a hop count, or addresses/subnets (as TRUST_PROXY holds them), or that setting
   * compiled once (`compileTrustProxy`) when the edge shares it with what it serves ahead of express.
   */
  trustProxy?: TrustProxySetting | TrustProxy;
  /** The OpenAPI document's title. */
  instanceName?: string;
  /** Hold every `/v1` answer to its route's documented status and schema (CHECK_RESPONSES; tests turn it on). */
  checkResponses?: boolean;
}

export interface EdgeAppOptions {
  config: EdgeConfig;
  logger: Logger;
  routes: readonly AnyRouteDefinition[];
  /** Identifies the caller of a `/v1` route before validation; plugged in by the identity feature. */
  authenticate?: Authenticate;
  /** Adds routes outside `/v1` (OAuth, discovery, connect); they run before the 404 handler. */
  mount?: (app: Express) => void;
}

export const OPENAPI_PATH = '/v1/openapi.json';

function assertUniqueRoutes(routes: readonly AnyRouteDefinition[]): void {
  const seenPaths = new Set<string>([`get ${OPENAPI_PATH}`]);
  const seenOperations = new Set<string>();
  for (const route of routes) {
    const key = `${route.method} ${toExpressPath(route.path)}`;
    if (seenPaths.has(key)) throw new Error(`route ${route.method.toUpperCase()} ${route.path} is defined twice`);
    if (seenOperations.has(route.operationId)) throw new Error(`operationId ${route.operationId} is used twice`);
    seenPaths.add(key);
    seenOperations.add(route.operationId);
  }
}

/**
 * The HTTP edge: request ids, tracing, access logs and metrics around `/healthz`, the `/v1` routes
 * (JSON only), the OpenAPI document and whatever `mount` adds; unknown routes and every error are rendered in
 * the one error shape.
 */
export function createEdgeApp(options: EdgeAppOptions): Express {
  const { config, logger, routes } = options;
  assertUniqueRoutes(routes);
  const openApiDocument = buildOpenApiDocument(routes, { title: config.instanceName ?? 'MCP Platform', appUrl: config.appUrl });

  const app = express();
  app.disable('x-powered-by');
  // Resources carry their revision as ETag (route-handler.ts); express's own body-hash ETags would cost a hash per
  // response and answer 304s nobody asked for.
  app.set('etag', false);
  // Nor does a revision ETag validate a cached copy: it counts what clients write, while views also show what the
  // platform observes (an MCP server's health, discovery outcome and counts) without moving it. express would answer
  // a browser's revalidation (If-None-Match naming the revision) with 304 and leave it showing a stale view; every
  // read gets the current resource instead (docs/api.md, Revisions).
  Object.defineProperty(app.request, 'fresh', { configurable: true, get: () => false });
  // express takes a function as it is: `req.ip` then uses the very rules the edge compiled.
  if (config.trustProxy !== undefined) app.set('trust proxy', compileTrustProxy(config.trustProxy));

  app.use(requestIdMiddleware);
  app.use(serverSpanMiddleware);
  app.use(accessLogMiddleware(logger));
  app.use('/v1', jsonBodyMiddleware(config.bodyLimitBytes));

  // Liveness only: /readyz (which calls the dependencies) and /metrics are served on the ops listener (OPS_PORT),
  // which the Ingress does not route (docs/architecture.md, Health, readiness and ops).
  app.get('/healthz', livenessHandler);

  app.get(OPENAPI_PATH, (_req: Request, res: Response) => {
    setRouteTemplate(res, OPENAPI_PATH);
    res.json(openApiDocument);
  });
  // The pages and OAuth routes (none under /v1). /mcp/{slug} does not reach express at all (edge.ts).
  options.mount?.(app);

  for (const route of routes) {
    app[route.method](toExpressPath(route.path), routeHandler(route, options.authenticate, config.checkResponses));
  }

  app.use(notFoundHandler(app));
  app.use(errorHandler(logger));
  return app;
}
