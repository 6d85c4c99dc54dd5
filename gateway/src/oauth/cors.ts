import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';

/**
 * CORS for what browser-based MCP clients call directly: the discovery documents and the token, registration
 * and revocation endpoints. Any origin, never credentials (no cookies are read by these routes), so `*` is
 * safe; the preflight allows the headers those clients send.
 */
const ALLOWED_HEADERS = 'Authorization, Content-Type, Accept, MCP-Protocol-Version';
const PREFLIGHT_MAX_AGE_SECONDS = '600';

/**
 * Sets the CORS headers and answers a preflight (204); true when the preflight was answered. On node's own
 * request and response, so the token endpoint served ahead of express (`token-endpoint.ts`) uses it too.
 */
export function answeredCors(req: IncomingMessage, res: ServerResponse, methods: string): boolean {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', 'WWW-Authenticate, Retry-After');
  if (req.method !== 'OPTIONS') return false;
  res.statusCode = 204;
  res.setHeader('Access-Control-Allow-Methods', methods);
  res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
  res.setHeader('Access-Control-Max-Age', PREFLIGHT_MAX_AGE_SECONDS);
  res.end();
  return true;
}

/** `answeredCors` as express middleware. */
export function allowAnyOrigin(methods: string) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!answeredCors(req, res, methods)) next();
  };
}
