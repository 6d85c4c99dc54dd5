import type { NextFunction, Request, Response } from 'express';

/**
 * CORS for what browser-based MCP clients call directly: the discovery documents and the token, registration
 * and revocation endpoints. Any origin, never credentials (no cookies are read by these routes), so `*` is
 * safe; the preflight allows the headers those clients send.
 */
const ALLOWED_HEADERS = 'Authorization, Content-Type, Accept, MCP-Protocol-Version';
const PREFLIGHT_MAX_AGE_SECONDS = '600';

export function allowAnyOrigin(methods: string) {
  return (req: Request, res: Response, next: NextFunction): void => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Expose-Headers', 'WWW-Authenticate, Retry-After');
    if (req.method === 'OPTIONS') {
      res
        .status(204)
        .set({
          'Access-Control-Allow-Methods': methods,
          'Access-Control-Allow-Headers': ALLOWED_HEADERS,
          'Access-Control-Max-Age': PREFLIGHT_MAX_AGE_SECONDS,
        })
        .end();
      return;
    }
    next();
  };
}
