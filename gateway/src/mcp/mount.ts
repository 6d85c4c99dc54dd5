import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError } from '@platform/runtime';
import type { EdgeDeps } from '../edge-deps';
import { requireGatewayToken } from '../oauth/resource-server';
import { setRouteTemplate } from '../route-template';
import { createDataPlane, DEFAULT_MCP_SETTINGS, type DataPlane } from './data-plane';
import { McpHttpError } from './http-errors';
import { errorResponse, RPC } from './jsonrpc';
import { originGuard } from './origin';
import { handlePost } from './post';
import { handleDelete, handleGet } from './stream';

export const MCP_PATH = '/mcp/:slug';

/**
 * `/mcp/{slug}`: the gateway's MCP endpoint (Streamable HTTP). Order matters: the Origin check first (DNS
 * rebinding), then the OAuth resource-server check (§5.5), then the data plane. Design notes: docs/gateway.md.
 */
export function mountMcpEndpoint(app: Express, deps: EdgeDeps, onStop?: (stop: () => Promise<void>) => void): void {
  let plane: DataPlane | undefined;
  const dataPlane = (): DataPlane => {
    if (!plane) {
      plane = createDataPlane(deps);
      onStop?.(() => plane!.close());
    }
    return plane;
  };
  const settings = deps.settings.mcp ?? DEFAULT_MCP_SETTINGS;
  const template = (_req: Request, res: Response, next: NextFunction) => {
    setRouteTemplate(res, '/mcp/{slug}');
    next();
  };
  const guard = [template, originGuard(deps.settings.appUrl, settings.allowedOrigins)];
  const token = requireGatewayToken(deps);
  const serve = (handler: (plane: DataPlane, req: Request, res: Response) => Promise<void>): RequestHandler => (req, res, next) => {
    handler(dataPlane(), req, res).catch((error: unknown) => answerFailure(deps, res, error, next));
  };

  app.options(MCP_PATH, ...guard, token);
  app.post(MCP_PATH, ...guard, token, serve(handlePost));
  app.get(MCP_PATH, ...guard, token, serve(handleGet));
  app.delete(MCP_PATH, ...guard, token, serve(handleDelete));
  app.all(MCP_PATH, ...guard, (_req: Request, res: Response) => {
    res.status(405).set('allow', 'GET, POST, DELETE').json(errorResponse(null, RPC.invalidRequest, 'Method not allowed'));
  });
}

/** Failures outside a JSON-RPC exchange, answered as JSON-RPC errors with the HTTP status they deserve. */
function answerFailure(deps: EdgeDeps, res: Response, error: unknown, next: NextFunction): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  if (error instanceof McpHttpError) {
    res.status(error.status).set(error.headers).json(error.body);
    return;
  }
  if (error instanceof AppError && error.code !== 'internal') {
    // The gateway vanished or was disabled between the token check and now, or a service is unavailable.
    res.status(error.httpStatus).json(errorResponse(null, error.code === 'not_found' ? RPC.invalidRequest : RPC.internalError, error.message));
    return;
  }
  deps.logger.error({ err: error }, 'the MCP data plane failed');
  next(error);
}
