import type { Express, Request, Response } from 'express';
import { JWKS_MAX_AGE_SECONDS } from '@platform/runtime';
import type { EdgeDeps } from '../edge-deps';
import { identityKeySourceOf, keysTtlMsOf } from '../mcp/identity-keys';
import { allowAnyOrigin } from './cors';

export const JWKS_PATH = '/.well-known/jwks.json';

/**
 * Verifiers and HTTP caches may keep the key set JWKS_MAX_AGE_SECONDS. The identity service counts with it (and the
 * edge's key cache) when it publishes a new key ahead of signing with it (docs/oauth.md, Identity tokens); a
 * rotated-out key stays published a day, and a verifier meeting an unknown kid fetches again, so caching never
 * breaks verification.
 */
const JWKS_CACHE = `public, max-age=${JWKS_MAX_AGE_SECONDS}`;

/** The public keys that verify identity tokens sent to MCP servers (not OAuth tokens); no authentication. */
export function mountJwks(app: Express, deps: EdgeDeps): void {
  const cors = allowAnyOrigin('GET');
  app.options(JWKS_PATH, cors);
  app.get(JWKS_PATH, cors, async (_req: Request, res: Response) => {
    const { publicJwks } = await identityKeySourceOf(deps.clients, keysTtlMsOf(deps.settings)).get();
    res.set('Cache-Control', JWKS_CACHE).json({ keys: publicJwks });
  });
}
