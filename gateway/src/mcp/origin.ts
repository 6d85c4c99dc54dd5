import type { NextFunction, Request, Response } from 'express';
import { errorResponse, RPC } from './jsonrpc';

/**
 * DNS-rebinding protection (MCP transport security): a request that carries an `Origin` must come from the
 * installation's own origin or one the operator allowed (MCP_ALLOWED_ORIGINS); otherwise 403 before anything else
 * runs. Requests without `Origin` (native clients, servers) pass to the token check. Allowed browser origins get
 * CORS answers, preflights included, so browser-based MCP clients can connect.
 */
export function originGuard(appUrl: string, allowedOrigins: readonly string[]) {
  const allowed = new Set([new URL(appUrl).origin, ...allowedOrigins.map((origin) => origin.replace(/\/+$/, ''))]);
  return (req: Request, res: Response, next: NextFunction): void => {
    const origin = req.headers.origin;
    if (origin === undefined) {
      next();
      return;
    }
    if (!allowed.has(origin)) {
      res.status(403).json(errorResponse(null, RPC.accessDenied, `Forbidden: requests from origin ${origin.slice(0, 200)} are not allowed`));
      return;
    }
    res.set({
      'access-control-allow-origin': origin,
      vary: 'Origin',
      'access-control-expose-headers': 'Mcp-Session-Id, WWW-Authenticate',
    });
    if (req.method === 'OPTIONS') {
      res
        .status(204)
        .set({
          'access-control-allow-methods': 'GET, POST, DELETE',
          'access-control-allow-headers': 'Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID',
          'access-control-max-age': '600',
        })
        .end();
      return;
    }
    next();
  };
}
