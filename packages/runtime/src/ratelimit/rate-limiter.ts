import { CacheTimeoutError, CacheUnavailableError } from '../cache/errors';
import type { Cache } from '../cache/port';

export interface RateLimitRule {
  /** Requests allowed per window; at least 1. */
  limit: number;
  windowMs: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in the current window after this one. */
  remaining: number;
  /** Seconds until the window resets when refused (at least 1); 0 when allowed. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  consume(key: string, rule: RateLimitRule): Promise<RateLimitDecision>;
}

/**
 * A replica whose clock runs a little behind may still count into a window the cache already expired; keeping
 * each counter this much longer than its window stops that from opening a fresh, empty counter.
 */
const CLOCK_SKEW_GRACE_MS = 2_000;

/**
 * Fixed-window rate limiting over `cache.increment`.
 *
 * Why a fixed window: one atomic INCR per request is exact under any concurrency across replicas (the count is
 * the order of arrival, so exactly `limit` requests pass) and costs one round trip and one small key per
 * window. The known trade-off: windows are aligned to the clock, so a client can spend its whole budget at the
 * end of one window and again at the start of the next, up to 2x `limit` within a short span around the edge.
 * That is acceptable for abuse protection; a sliding log would be exact at edges but costs memory per request.
 *
 * The window start is part of the key, so every replica counts the same window into the same counter.
 *
 * When the cache cannot count (Redis lost or not answering) the request is let through uncounted: these limits guard
 * against abuse, and refusing instead turned a Redis outage into one of every API-key request and OAuth endpoint
 * (the token endpoint's refresh grants among them) on every replica (docs/architecture.md, When a dependency fails).
 */
export function createRateLimiter(cache: Cache): RateLimiter {
  return {
    async consume(key: string, rule: RateLimitRule): Promise<RateLimitDecision> {
      assertRule(rule);
      const now = Date.now();
      const windowStart = now - (now % rule.windowMs);
      const windowEnd = windowStart + rule.windowMs;
      const counterKey = `ratelimit:${rule.windowMs}:${windowStart}:${key}`;
      let count: number;
      try {
        ({ count } = await cache.increment(counterKey, windowEnd - now + CLOCK_SKEW_GRACE_MS));
      } catch (error) {
        if (error instanceof CacheUnavailableError || error instanceof CacheTimeoutError) return uncounted(rule);
        throw error;
      }
      const allowed = count <= rule.limit;
      return {
        allowed,
        limit: rule.limit,
        remaining: Math.max(0, rule.limit - count),
        retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((windowEnd - now) / 1000)),
      };
    },
  };
}

function uncounted(rule: RateLimitRule): RateLimitDecision {
  return { allowed: true, limit: rule.limit, remaining: rule.limit, retryAfterSeconds: 0 };
}

function assertRule(rule: RateLimitRule): void {
  if (!Number.isSafeInteger(rule.limit) || rule.limit < 1) {
    throw new RangeError(`rate limit must be a positive integer, got ${rule.limit}`);
  }
  if (!Number.isSafeInteger(rule.windowMs) || rule.windowMs < 1) {
    throw new RangeError(`rate limit window must be a positive integer of milliseconds, got ${rule.windowMs}`);
  }
}
