import { describeWith, startRedisRelay, uniquePrefix, type TcpProxy } from '@platform/test';
import { CacheTimeoutError, CacheUnavailableError } from '../../src/cache/errors';
import type { Cache } from '../../src/cache/port';
import { createRedisCache } from '../../src/cache/redis-cache';
import { AppError } from '../../src/errors';
import { createLogger } from '../../src/logging/logger';
import { createMaintenanceWatcher, MAINTENANCE_CHANNEL, type MaintenanceWatcher } from '../../src/maintenance';
import { createRateLimiter } from '../../src/ratelimit';
import { waitFor, waitUntil } from './wait';

const logger = createLogger({ level: 'silent' });

/**
 * The Redis adapter while Redis is away, through a relay that cuts or stalls its connections. A lost connection
 * fails every command at once (CacheUnavailableError, an AppError `unavailable`), instead of holding it in the client's
 * offline queue for the command timeout: every request that touched the cache (a generation read, a rate limit) took
 * that long during an outage. Rate limits let requests through uncounted while the cache cannot count.
 */
describeWith('redis', 'redis cache while Redis is away', (url) => {
  let relay: TcpProxy & { url: string };
  let cache: Cache;
  const events: string[] = [];

  beforeAll(async () => {
    relay = await startRedisRelay(url());
    // A command timeout far beyond the test's: a command that waited for it instead of failing at once fails the test.
    cache = createRedisCache({ url: relay.url, keyPrefix: uniquePrefix('outage'), logger, commandTimeoutMs: 120_000 });
    await cache.subscribe('watched', () => undefined, { onLive: () => events.push('live'), onInterrupted: () => events.push('interrupted') });
  });
  afterAll(async () => {
    await cache?.close();
    await relay?.close();
  });

  it('fails commands at once while the connection is lost, as `unavailable`, and lets rate-limited requests through', async () => {
    await cache.set('key', 'value', 60_000);
    relay.cut();
    await waitFor(() => events.includes('interrupted'), 'the connections to drop');
    const failure = await cache.get('key').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CacheUnavailableError);
    expect(failure).toBeInstanceOf(AppError);
    expect(failure).toMatchObject({ code: 'unavailable' });
    for (const command of [cache.set('key', 'other', 1_000), cache.increment('counter', 1_000), cache.publish('watched', 'x'), cache.ping()]) {
      await expect(command).rejects.toBeInstanceOf(CacheUnavailableError);
    }

    const limiter = createRateLimiter(cache);
    const rule = { limit: 1, windowMs: 60_000 };
    for (let i = 0; i < 3; i++) await expect(limiter.consume('uncounted', rule)).resolves.toMatchObject({ allowed: true });
  }, 30_000);

  it('fails commands as `unavailable` when Redis was away from the start, instead of waiting for its first connection', async () => {
    relay.cut();
    const late = createRedisCache({ url: relay.url, keyPrefix: uniquePrefix('late'), logger, commandTimeoutMs: 120_000 });
    try {
      // node-redis retries the first connection for ever; a command waits for its first failed attempt at most.
      await expect(late.get('key')).rejects.toBeInstanceOf(CacheUnavailableError);
      await expect(late.increment('counter', 1_000)).rejects.toBeInstanceOf(CacheUnavailableError);
    } finally {
      relay.restore();
      await late.close();
    }
  }, 30_000);

  it('serves again and resumes its subscriptions once Redis is back, without being recreated', async () => {
    relay.restore();
    // Reconnection backs off to 5 s between attempts: generous waits.
    await waitUntil(() => cache.get('key').catch(() => 'still away'), (value) => value === 'value', 'commands to be served again', 30_000);
    await waitFor(() => events[events.length - 1] === 'live', 'the subscription to be live again', 30_000);
    expect(events).toEqual(['live', 'interrupted', 'live']);
  }, 60_000);

  it('lets rate-limited requests through uncounted when Redis stops answering, and waits out one command at a time', async () => {
    const stalling = createRedisCache({ url: relay.url, keyPrefix: uniquePrefix('stalled'), logger, commandTimeoutMs: 300 });
    try {
      await stalling.ping();
      relay.freeze('');
      await expect(stalling.increment('counter', 1_000)).rejects.toBeInstanceOf(CacheTimeoutError);
      const limiter = createRateLimiter(stalling);
      await expect(limiter.consume('uncounted', { limit: 1, windowMs: 60_000 })).resolves.toMatchObject({ allowed: true });
      await expect(limiter.consume('uncounted', { limit: 1, windowMs: 60_000 })).resolves.toMatchObject({ allowed: true });

      // Stalled: one command finds out whether Redis answers again (it waits the timeout); the others meanwhile are
      // refused at once rather than each waiting it too.
      const probe = stalling.get('key').catch((error: unknown) => error);
      const meanwhile = await Promise.all([stalling.get('key'), stalling.ping(), stalling.increment('counter', 1_000)].map((command) => command.catch((error: unknown) => error)));
      for (const refused of meanwhile) expect(refused).toBeInstanceOf(CacheUnavailableError);
      expect(await probe).toBeInstanceOf(CacheTimeoutError);

      // Once Redis answers (the frozen bytes included), commands go out freely again.
      relay.thaw();
      await waitUntil(() => stalling.ping().then(() => 'answered', () => 'not yet'), (value) => value === 'answered', 'Redis to answer again', 10_000);
      await expect(Promise.all([stalling.ping(), stalling.ping(), stalling.increment('counter', 1_000)])).resolves.toHaveLength(3);
    } finally {
      relay.thaw();
      await stalling.close();
    }
  }, 30_000);
});

/**
 * A process started while Redis is away (docs/architecture.md, When a dependency fails): its subscriptions resolve
 * once registered, without waiting for Redis (start waited for them, so a pod restarted during an outage never became
 * ready), and become live, and deliver, once Redis answers. A follower that must not miss a change (the maintenance
 * watcher) checks the truth once its subscription is live, since whatever was announced before is lost to it.
 */
describeWith('redis', 'redis cache started while Redis is away', (url) => {
  let relay: TcpProxy & { url: string };
  let cache: Cache;
  let peer: Cache;
  let watcher: MaintenanceWatcher | undefined;

  beforeAll(async () => {
    relay = await startRedisRelay(url());
    relay.cut();
    const keyPrefix = uniquePrefix('away-at-start');
    // A command timeout far beyond the test's: a subscription that waited for it fails the test.
    cache = createRedisCache({ url: relay.url, keyPrefix, logger, commandTimeoutMs: 120_000 });
    peer = createRedisCache({ url: url(), keyPrefix, logger });
  });
  afterAll(async () => {
    await watcher?.stop();
    await cache?.close();
    await peer?.close();
    await relay?.close();
  });

  it('finishes subscribing (and a follower starting) without Redis, and delivers once Redis answers', async () => {
    let setting = { enabled: false, reason: '', revision: '1' };
    const change = (enabled: boolean) => (setting = { enabled, reason: enabled ? 'upgrade' : '', revision: String(Number(setting.revision) + 1) });
    // Re-read only hourly: a change made while Redis is away reaches it only through the check once live.
    watcher = createMaintenanceWatcher({ cache, fetch: async () => setting, refreshMs: 3_600_000, logger });
    await watcher.start();
    expect(watcher.isOn()).toBe(false);

    const events: string[] = [];
    const watched: string[] = [];
    const plain: string[] = [];
    const dropped: string[] = [];
    await cache.subscribe('watched', (m) => watched.push(m), { onLive: () => events.push('live'), onInterrupted: () => events.push('interrupted') });
    await cache.subscribe('plain', (m) => plain.push(m));
    // Ended before Redis ever confirmed it: at once, and nothing reaches it later.
    const unsubscribe = await cache.subscribe('dropped', (m) => dropped.push(m));
    await unsubscribe();
    expect(events).toEqual([]);

    // Announced while Redis is away from this process: lost to it.
    change(true);
    relay.restore();
    // Reconnection backs off to 5 s between attempts: generous waits.
    await waitFor(() => events.includes('live'), 'the subscription to be live', 30_000);
    await waitFor(() => watcher!.isOn(), 'the watcher to check the setting once its subscription is live', 30_000);

    await peer.publish('dropped', 'not for it');
    await peer.publish('watched', 'after');
    await peer.publish('plain', 'after');
    await waitFor(() => watched.length === 1 && plain.length === 1, 'the messages published once live');
    expect([watched, plain, dropped]).toEqual([['after'], ['after'], []]);
    expect(events).toEqual(['live']);

    await peer.publish(MAINTENANCE_CHANNEL, JSON.stringify(change(false)));
    await waitFor(() => !watcher!.isOn(), 'the maintenance signal');
  }, 60_000);
});

/** A Redis that accepts connections and never answers, from the start: a start is held at most one command timeout. */
describeWith('redis', 'redis cache started while Redis does not answer', (url) => {
  it('waits for one subscription\'s confirmation, then registers the others at once until Redis answers', async () => {
    const relay = await startRedisRelay(url());
    relay.stall();
    const cache = createRedisCache({ url: relay.url, keyPrefix: uniquePrefix('stalled-start'), logger, commandTimeoutMs: 2_000 });
    try {
      const live: string[] = [];
      await cache.subscribe('first', () => undefined, { onLive: () => live.push('first') });
      // Each would wait out the 2 s timeout again; they must not wait at all (1.5 s is a margin, not a measurement).
      const notWaited = (subscribing: Promise<unknown>) =>
        Promise.race([subscribing.then(() => 'registered'), new Promise((resolve) => setTimeout(() => resolve('waited'), 1_500))]);
      expect(await notWaited(cache.subscribe('second', () => undefined, { onLive: () => live.push('second') }))).toBe('registered');
      expect(await notWaited(cache.subscribe('third', () => undefined, { onLive: () => live.push('third') }))).toBe('registered');
      expect(live).toEqual([]);
      relay.thaw();
      await waitFor(() => live.length === 3, 'the subscriptions to be live once Redis answers', 30_000);
    } finally {
      await cache.close();
      await relay.close();
    }
  }, 60_000);
});
