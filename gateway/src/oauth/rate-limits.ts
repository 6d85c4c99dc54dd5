import { limitSubjectOf } from '@platform/runtime';
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

/**
 * Counts one request of the client address (`req.ip`, or `clientAddress` ahead of express: the same rules) against
 * the endpoint's limit. Returns the seconds to wait when refused, else null.
 */
export async function overRateLimit(deps: EdgeDeps, endpoint: OAuthEndpoint, clientAddress: string): Promise<number | null> {
  const decision = await deps.rateLimiter.consume(`oauth:${endpoint}:${limitSubjectOf(clientAddress) || 'unknown'}`, {
    limit: OAUTH_RATE_LIMITS[endpoint],
    windowMs: WINDOW_MS,
  });
  return decision.allowed ? null : Math.max(1, Math.ceil(decision.retryAfterSeconds));
}
