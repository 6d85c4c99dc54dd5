import { describeWith, killRedisConnections, startRedisRelay, uniquePrefix } from '@platform/test';
import { authGenerationOf, bumpAuthGeneration, readAuthGeneration } from '../../src/cache/auth-generation';
import { createMemoryCache } from '../../src/cache/memory-cache';
import type { Cache } from '../../src/cache/port';
import { connectionName, createRedisCache } from '../../src/cache/redis-cache';
import { createLogger } from '../../src/logging/logger';
import { sleep, waitFor, waitUntil } from './wait';

const logger = createLogger({ level: 'silent' });

/** The real cache, with its shared reads counted: the view must not read the generation while it is live. */
function countingReads(cache: Cache): { cache: Cache; reads(): number } {
  let reads = 0;
  return {
    cache: {
      ...cache,
      get: (key: string) => {
        reads += 1;
        return cache.get(key);
      },
    },
    reads: () => reads,
  };
}

/**
 * Resolves once the view's generation differs from `before` (a change has reached this process), asking the view
 * afresh each time: the announcement may arrive after the first ask. The deadline only bounds a failing test.
 */
function waitForChange(current: () => Promise<string | null>, before: string | null): Promise<string | null> {
  return waitUntil(current, (now) => now !== before, 'the generation to move on');
}

describe('auth generation view (memory cache)', () => {
  it('is stable while nothing changes and moves on at every change, without reading the shared value', async () => {
    const memory = createMemoryCache({ keyPrefix: 'gen:' });
    const { cache, reads } = countingReads(memory);
    const view = authGenerationOf(cache);
    const first = await view.current();
    expect(await view.current()).toBe(first);

    await bumpAuthGeneration(memory);
    const second = await waitForChange(() => view.current(), first);
    expect(await view.current()).toBe(second);
    await bumpAuthGeneration(memory);
    await waitForChange(() => view.current(), second);
    expect(reads()).toBe(0);
    await memory.close();
  });

  it("moves on at once for a change this process makes, before the change's announcement comes back", async () => {
    const memory = createMemoryCache({ keyPrefix: 'gen:' });
    // The announcement is slow to come back (a busy cache, a slow subscriber connection): delivered 1 s late.
    const late: Array<Promise<void>> = [];
    const slowAnnouncements: Cache = {
      ...memory,
      publish: (channel: string, message: string) => {
        if (channel !== 'auth:generation') return memory.publish(channel, message);
        late.push(sleep(1_000).then(() => memory.publish(channel, message)));
        return Promise.resolve();
      },
    };
    const view = authGenerationOf(slowAnnouncements);
    const before = await view.current();
    await bumpAuthGeneration(slowAnnouncements);
    const after = await view.current();
    expect(after).not.toBe(before);
    await Promise.all(late);
    await memory.close();
  });

  it('answers every request of one event-loop turn with the generation after that turn\'s poll phase', async () => {
    const memory = createMemoryCache({ keyPrefix: 'gen:' });
    const view = authGenerationOf(memory);
    const before = await view.current();
    // Requests read in one poll, then (same poll) the handling of a change: every one of them must see the change.
    const asked = [view.current(), view.current(), view.current()];
    view.changedHere();
    const answers = await Promise.all(asked);
    expect(new Set(answers).size).toBe(1);
    expect(answers[0]).not.toBe(before);
    // A later turn starts afresh: a change between turns is seen too.
    view.changedHere();
    expect(await view.current()).not.toBe(answers[0]);
    await memory.close();
  });

  it('is one view per cache, shared by everyone asking', () => {
    const memory = createMemoryCache({ keyPrefix: 'gen:' });
    expect(authGenerationOf(memory)).toBe(authGenerationOf(memory));
    return memory.close();
  });
});

describeWith('redis', 'auth generation view (redis cache)', (url) => {
  let cache: Cache;
  let peer: Cache;
  let keyPrefix: string;

  beforeEach(() => {
    keyPrefix = uniquePrefix('gen');
    // Two clients on one Redis and prefix: this process's edge, and a service on another replica.
    cache = createRedisCache({ url: url(), keyPrefix, logger });
    peer = createRedisCache({ url: url(), keyPrefix, logger });
  });

  afterEach(async () => {
    await cache.close();
    await peer.close();
  });

  it('follows changes announced by another client in memory, once its subscription is confirmed', async () => {
    const counted = countingReads(cache);
    const view = authGenerationOf(counted.cache);
    // Until the subscription is confirmed every call reads the shared value; afterwards none does.
    let first = await view.current();
    while (!first?.startsWith('local:')) first = await view.current();
    const confirmedAfter = counted.reads();
    expect(await view.current()).toBe(first);

    await bumpAuthGeneration(peer);
    const second = await waitForChange(() => view.current(), first);
    expect(second).toMatch(/^local:/);
    expect(await readAuthGeneration(cache)).not.toBeNull();
    expect(counted.reads()).toBe(confirmedAfter);
  });

  it('when its subscriber connection drops, reads the shared value until re-subscribed and never answers with an older generation', async () => {
    const view = authGenerationOf(cache);
    let before = await view.current();
    while (!before?.startsWith('local:')) before = await view.current();

    // Observe the interruption on the same connection: the view has heard it too by then (same event).
    const duringOutage: Array<Promise<string | null>> = [];
    const events: string[] = [];
    await cache.subscribe('observer', () => undefined, {
      onInterrupted: () => {
        events.push('interrupted');
        if (duringOutage.length > 0) return; // closing the cache at the end interrupts it once more
        // A change made while the subscription is down: its message is lost, the shared value is not.
        duringOutage.push(bumpAuthGeneration(peer).then(() => view.current()));
        duringOutage.push(view.current());
      },
      onLive: () => events.push('live'),
    });
    expect(await killRedisConnections(url(), connectionName(keyPrefix, 'subscriber'))).toBe(1);
    await waitFor(() => events.length === 3, 'the interruption and the resumption');
    expect(events).toEqual(['live', 'interrupted', 'live']);

    const [afterBump, atInterruption] = await Promise.all(duringOutage);
    // Asked at the moment of the interruption: read from Redis, not from the (possibly stale) epoch.
    expect(atInterruption).toMatch(/^shared:/);
    for (const generation of [afterBump, atInterruption, await view.current()]) expect(generation).not.toBe(before);
    // Live again, on a new local epoch.
    expect(await view.current()).toMatch(/^local:/);
  });

  it('stops trusting a subscription whose connection stalls without failing, and trusts it again once it delivers', async () => {
    // The edge's cache reaches Redis through a relay that can stall the subscriber connection without closing it.
    const proxy = await startRedisRelay(url());
    const proxied = createRedisCache({ url: proxy.url, keyPrefix, logger });
    try {
      const view = authGenerationOf(proxied);
      const before = await waitUntil(() => view.current(), (generation) => generation?.startsWith('local:') === true, 'the subscription to be confirmed');

      expect(proxy.freeze('SUBSCRIBE')).toBe(1);
      // The announcement of this change is held back on the stalled connection; only the overdue probe can tell.
      await bumpAuthGeneration(peer);
      const changed = await waitForChange(() => view.current(), before);
      expect(changed).toBe(`shared:${await readAuthGeneration(peer)}`);
      expect(await view.current()).toBe(changed);

      proxy.thaw();
      const after = await waitUntil(() => view.current(), (generation) => generation?.startsWith('local:') === true, 'the subscription to be trusted again');
      expect(after).toMatch(/^local:/);
      expect(after).not.toBe(before);
    } finally {
      await proxied.close();
      await proxy.close();
    }
  });
});
