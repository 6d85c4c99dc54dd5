import type { Cache } from '../../src/cache/port';
import { createRateLimiter, type RateLimitDecision } from '../../src/ratelimit/rate-limiter';
import { sleep } from '../cache/wait';

/** Two handles on one shared cache (see CachePair in the cache contract). */
export interface LimiterCaches {
  cache: Cache;
  peer: Cache;
}

const HOUR_MS = 3_600_000;

/** Windows are aligned to the clock; start a test just after a boundary so its requests share one window. */
async function startOfFreshWindow(windowMs: number, atLeastMs: number): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < atLeastMs) await sleep(left + 5);
}

export function rateLimiterContract(open: () => Promise<LimiterCaches>): void {
  let caches: LimiterCaches;

  beforeEach(async () => {
    caches = await open();
  });

  afterEach(async () => {
    await caches.cache.close();
    if (caches.peer !== caches.cache) await caches.peer.close();
  });

  it('allows exactly the limit among 500 concurrent requests from two clients', async () => {
    const limiters = [createRateLimiter(caches.cache), createRateLimiter(caches.peer)];
    const rule = { limit: 300, windowMs: HOUR_MS };
    await startOfFreshWindow(rule.windowMs, 5_000);

    const decisions = await Promise.all(
      Array.from({ length: 500 }, (_, i) => limiters[i % 2]!.consume('user-1', rule)),
    );

    const allowed = decisions.filter((d) => d.allowed);
    const refused = decisions.filter((d) => !d.allowed);
    expect(allowed).toHaveLength(300);
    expect(refused).toHaveLength(200);
    expect(allowed.map((d) => d.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 300 }, (_, i) => i));
    for (const decision of refused) {
      expect(decision).toMatchObject({ limit: 300, remaining: 0 });
      expect(decision.retryAfterSeconds).toBeGreaterThan(0);
      expect(decision.retryAfterSeconds).toBeLessThanOrEqual(3_600);
    }
    for (const decision of allowed) expect(decision.retryAfterSeconds).toBe(0);
  });

  it('counts keys and window lengths separately', async () => {
    const limiter = createRateLimiter(caches.cache);
    const rule = { limit: 1, windowMs: HOUR_MS };
    await startOfFreshWindow(rule.windowMs, 5_000);
    expect((await limiter.consume('alice', rule)).allowed).toBe(true);
    expect((await limiter.consume('alice', rule)).allowed).toBe(false);
    expect((await limiter.consume('bob', rule)).allowed).toBe(true);
    expect((await limiter.consume('alice', { limit: 1, windowMs: HOUR_MS / 2 })).allowed).toBe(true);
  });

  it('allows again once the window has passed', async () => {
    const limiters = [createRateLimiter(caches.cache), createRateLimiter(caches.peer)];
    const rule = { limit: 2, windowMs: 1_000 };
    await startOfFreshWindow(rule.windowMs, 900);
    const burst: RateLimitDecision[] = [];
    for (let i = 0; i < 3; i++) burst.push(await limiters[i % 2]!.consume('resets', rule));
    expect(burst.map((d) => d.allowed)).toEqual([true, true, false]);
    expect(burst[2]!.retryAfterSeconds).toBe(1);

    await sleep(1_000 - (Date.now() % 1_000) + 5);
    const next = await limiters[1]!.consume('resets', rule);
    expect(next).toEqual({ allowed: true, limit: 2, remaining: 1, retryAfterSeconds: 0 });
  });

  it('refuses a rule that cannot be enforced', async () => {
    const limiter = createRateLimiter(caches.cache);
    await expect(limiter.consume('k', { limit: 0, windowMs: 1_000 })).rejects.toBeInstanceOf(RangeError);
    await expect(limiter.consume('k', { limit: 1, windowMs: 0 })).rejects.toBeInstanceOf(RangeError);
    await expect(limiter.consume('k', { limit: 1.5, windowMs: 1_000 })).rejects.toBeInstanceOf(RangeError);
  });
}
