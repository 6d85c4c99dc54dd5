import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './http-errors';
import { errorResponse, RPC } from './jsonrpc';

const CORS_EXPOSED = { vary: 'Origin', 'access-control-expose-headers': 'Mcp-Session-Id, WWW-Authenticate' };
const PREFLIGHT = {
  'access-control-allow-methods': 'GET, POST, DELETE',
  'access-control-allow-headers': 'Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID',
  'access-control-max-age': '600',
};

/**
 * DNS-rebinding protection (MCP transport security): a request that carries an `Origin` must come from the
 * installation's own origin or one the operator allowed (MCP_ALLOWED_ORIGINS); otherwise 403 before anything else
 * runs. Requests without `Origin` (native clients, servers) pass to the token check. Allowed browser origins get
 * CORS answers, preflights included, so browser-based MCP clients can connect. Returns true when it answered.
 */
export function originCheck(appUrl: string, allowedOrigins: readonly string[]) {
  const allowed = new Set([new URL(appUrl).origin, ...allowedOrigins.map((origin) => origin.replace(/\/+$/, ''))]);
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const origin = req.headers.origin;
    if (origin === undefined) return false;
    if (!allowed.has(origin)) {
      sendJson(res, 403, errorResponse(null, RPC.accessDenied, `Forbidden: requests from origin ${origin.slice(0, 200)} are not allowed`));
      return true;
    }
    res.setHeader('access-control-allow-origin', origin);
    for (const [name, value] of Object.entries(CORS_EXPOSED)) res.setHeader(name, value);
    if (req.method !== 'OPTIONS') return false;
    res.writeHead(204, PREFLIGHT).end();
    return true;
  };
}
