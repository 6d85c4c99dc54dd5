import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, pollPhaseMark } from '@platform/runtime';
import { serveAheadOfExpress } from '../ahead-of-express';
import type { EdgeDeps } from '../edge-deps';
import { renderError } from '../error-handler';
import { createGatewayTokenCheck, type McpPrincipal } from '../oauth/resource-server';
import { createDataPlane, DEFAULT_MCP_SETTINGS, type DataPlane } from './data-plane';
import { McpHttpError, sendJson } from './http-errors';
import { errorResponse, RPC } from './jsonrpc';
import { originCheck } from './origin';
import { handlePost } from './post';
import { handleDelete, handleGet, type AccessCheck } from './stream';

export const MCP_ROUTE = '/mcp/{slug}';
const PREFIX = '/mcp/';
const ALLOW = 'GET, POST, DELETE';

/** `readAt`: the request's `pollPhaseMark()`, for the catalog generation check (runtime shared-generation.ts). */
type Handler = (plane: DataPlane, req: IncomingMessage, res: ServerResponse, principal: McpPrincipal, readAt: number, recheck: AccessCheck) => Promise<void>;
const HANDLERS: Record<string, Handler> = { POST: handlePost, GET: handleGet, DELETE: handleDelete };

/** The gateway's MCP endpoint, served ahead of the edge's express app. */
export interface McpEndpoint {
  /** Serves the request when its path is `/mcp/{slug}` and returns true; false leaves it to the rest of the edge. */
  serve(req: IncomingMessage, res: ServerResponse): boolean;
  /** The listener began draining: end the open GET streams and refuse new ones (DataPlane.drain). */
  drain(): void;
  close(): Promise<void>;
}

/**
 * `/mcp/{slug}`: the gateway's MCP endpoint (Streamable HTTP), the platform's hot path. It is served straight from
 * node's HTTP server rather than through express's router and middleware chain (docs/gateway.md, "The hot path"),
 * with the edge's own request id, span, metric and access log. Order matters: the Origin check first (DNS
 * rebinding), then the OAuth resource-server check (§5.5), then the data plane.
 */
export function createMcpEndpoint(deps: EdgeDeps): McpEndpoint {
  let plane: DataPlane | undefined;
  let draining = false;
  const dataPlane = (): DataPlane => {
    if (!plane) {
      plane = createDataPlane(deps);
      if (draining) plane.drain();
    }
    return plane;
  };
  const settings = deps.settings.mcp ?? DEFAULT_MCP_SETTINGS;
  const origin = originCheck(deps.settings.appUrl, settings.allowedOrigins);
  const checkToken = createGatewayTokenCheck(deps);

  async function dispatch(req: IncomingMessage, res: ServerResponse, slug: string): Promise<void> {
    const readAt = pollPhaseMark();
    if (origin(req, res)) return;
    const method = req.method ?? 'GET';
    const handler = HANDLERS[method];
    if (!handler && method !== 'OPTIONS') {
      sendJson(res, 405, errorResponse(null, RPC.invalidRequest, 'Method not allowed'), { allow: ALLOW });
      return;
    }
    let principal: McpPrincipal;
    try {
      principal = await checkToken(slug, req.headers.authorization);
    } catch (error) {
      // The resource-server check's refusals (401 with its challenge, 404): the edge's one error shape.
      renderError(deps.logger, res, error);
      return;
    }
    if (!handler) {
      // A preflight without Origin (not from a browser) that carries a valid token: say what the endpoint allows.
      res.writeHead(204, { allow: ALLOW }).end();
      return;
    }
    await handler(dataPlane(), req, res, principal, readAt, () => checkToken(slug, req.headers.authorization));
  }

  return {
    serve(req, res) {
      const url = req.url ?? '';
      if (!url.startsWith(PREFIX)) return false;
      const query = url.indexOf('?');
      const slug = url.slice(PREFIX.length, query < 0 ? undefined : query);
      // Deeper paths are not the endpoint: the rest of the edge answers them (404).
      if (slug.includes('/')) return false;
      serveAheadOfExpress(deps.logger, req, res, MCP_ROUTE, () =>
        dispatch(req, res, decodeSlug(slug)).catch((error: unknown) => answerFailure(deps, res, error)),
      );
      return true;
    },
    drain() {
      draining = true;
      plane?.drain();
    },
    async close() {
      await plane?.close();
    },
  };
}

/** A slug is plain ASCII; anything percent-encoded is compared as decoded (and then refused as malformed). */
function decodeSlug(raw: string): string {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * Failures of the data plane outside a JSON-RPC exchange, answered as JSON-RPC errors with the HTTP status they
 * deserve; anything unexpected as the edge's 500.
 */
function answerFailure(deps: EdgeDeps, res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  if (error instanceof McpHttpError) {
    sendJson(res, error.status, error.body, error.headers);
    return;
  }
  if (error instanceof AppError && error.code !== 'internal') {
    // The gateway vanished or was disabled between the token check and now, or a service is unavailable.
    sendJson(res, error.httpStatus, errorResponse(null, error.code === 'not_found' ? RPC.invalidRequest : RPC.internalError, error.message));
    return;
  }
  renderError(deps.logger, res, error);
}

