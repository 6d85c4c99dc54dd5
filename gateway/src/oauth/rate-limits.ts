import type { Request } from 'express';
import type { EdgeDeps } from '../edge-deps';

/** §8: per client address, per minute, shared across replicas through the cache. */
export const OAUTH_RATE_LIMITS = {
  authorize: 60,
  token: 60,
  revoke: 60,
  register: 10,
} as const;

export type OAuthEndpoint = keyof typeof OAUTH_RATE_LIMITS;

const WINDOW_MS = 60_000;

const clientAddresses = new WeakMap<Request, string>();

/**
 * The client address (`req.ip`: the socket, or the hop TRUST_PROXY trusts), worked out once per request: express
 * parses the forwarding chain again at every read of `req.ip`, and the token endpoint needs it twice.
 */
export function clientAddressOf(req: Request): string {
  let address = clientAddresses.get(req);
  if (address === undefined) clientAddresses.set(req, (address = req.ip ?? ''));
  return address;
}

/**
 * Counts one request of the client address against the endpoint's limit. Returns the seconds to wait when
 * refused, else null.
 */
export async function overRateLimit(deps: EdgeDeps, endpoint: OAuthEndpoint, req: Request): Promise<number | null> {
  const decision = await deps.rateLimiter.consume(`oauth:${endpoint}:${clientAddressOf(req) || 'unknown'}`, {
    limit: OAUTH_RATE_LIMITS[endpoint],
    windowMs: WINDOW_MS,
  });
  return decision.allowed ? null : Math.max(1, Math.ceil(decision.retryAfterSeconds));
}
