import type { Express, Request, Response } from 'express';
import type { EdgeDeps } from '../edge-deps';
import { setRouteTemplate } from '../route-template';
import { requireGatewayToken } from './resource-server';

export const MCP_PATH = '/mcp/:slug';

/**
 * `/mcp/{slug}` guarded by the resource-server check. The gateway's MCP endpoint itself comes with the gateway
 * issue, which replaces the placeholder handler below (and keeps `requireGatewayToken` in front of it).
 */
export function mountMcpEndpoint(app: Express, deps: EdgeDeps): void {
  app.all(
    MCP_PATH,
    (_req: Request, res: Response, next: () => void) => {
      setRouteTemplate(res, '/mcp/{slug}');
      next();
    },
    requireGatewayToken(deps),
    (_req: Request, res: Response) => {
      res.status(501).json({
        jsonrpc: '2.0',
        error: { code: -32601, message: "The gateway's MCP endpoint is not available yet" },
        id: null,
      });
    },
  );
}
