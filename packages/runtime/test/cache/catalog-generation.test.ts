import { describeWith, killRedisConnections, memoryLogger, startRedisRelay, uniquePrefix } from '@platform/test';
import { authGenerationOf, bumpAuthGeneration } from '../../src/cache/auth-generation';
import {
  announceCatalogChange,
  catalogChangeCommitted,
  catalogGeneration,
  catalogGenerationOf,
  gatewaysNamedIn,
  MAX_GATEWAYS_PER_MESSAGE,
  onCatalogChange,
} from '../../src/cache/catalog-generation';
import { createMemoryCache } from '../../src/cache/memory-cache';
import type { Cache } from '../../src/cache/port';
import { connectionName, createRedisCache } from '../../src/cache/redis-cache';
import { pollPhaseMark, SharedGeneration } from '../../src/cache/shared-generation';
import { createLogger } from '../../src/logging/logger';
import { metricsRegistry } from '../../src/telemetry/metrics';
import { sleep, waitFor, waitUntil, WAIT_MS } from './wait';

const logger = createLogger({ level: 'silent' });
const GATEWAY_A = '0b9e3c1e-5d2f-4a7b-8c6d-1e2f3a4b5c6d';
const GATEWAY_B = '7d1f0a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b';

/** The view's generation once its subscription is confirmed and nothing is moving it. */
async function settled(current: () => Promise<string>): Promise<string> {
  for (const giveUpAt = Date.now() + WAIT_MS; Date.now() < giveUpAt; await sleep(10)) {
    const generation = await current();
    if (generation.startsWith('local:') && (await current()) === generation) return generation;
  }
  throw new Error('the view never settled on a local generation');
}

describe('catalog generation (memory cache)', () => {
  let cache: Cache;
  beforeEach(() => {
    cache = createMemoryCache({ keyPrefix: uniquePrefix('catgen') });
  });
  afterEach(() => cache.close());

  it('hears an announcement naming gateways without moving the generation; one naming none moves it', async () => {
    const view = catalogGenerationOf(cache);
    const heard: string[][] = [];
    const stop = view.onAnnouncement((message) => heard.push(gatewaysNamedIn(message)));
    const before = await settled(() => view.current());

    await announceCatalogChange(cache, [GATEWAY_A, GATEWAY_B]);
    // The announcing process's own view moved on at once (it cannot wait for its announcement to come back).
    const afterOwn = await view.current();
    expect(afterOwn).not.toBe(before);
    await waitFor(() => heard.length === 1, 'the announcement');
    expect(heard[0]).toEqual([GATEWAY_A, GATEWAY_B]);
    expect(await view.current()).toBe(afterOwn);

    await announceCatalogChange(cache);
    await waitFor(() => heard.length === 2, 'the second announcement');
    expect(heard[1]).toEqual([]);
    const afterAny = await view.current();
    expect(afterAny).not.toBe(afterOwn);
    stop();
  });

  it('names a long list of gateways in several messages of a bounded size, as one change that leaves the generation', async () => {
    const view = catalogGenerationOf(cache);
    const heard: string[][] = [];
    const stop = view.onAnnouncement((message) => heard.push(gatewaysNamedIn(message)));
    await settled(() => view.current());
    const ids = Array.from({ length: 2 * MAX_GATEWAYS_PER_MESSAGE + 50 }, (_, n) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`);
    const movedBefore = catalogGeneration.changesMadeHere();

    await catalogChangeCommitted({ cache, logger }, ids);
    const afterOwn = await view.current();
    await waitFor(() => heard.length === 3, 'the three messages');
    // Every id, none twice, and never the empty list ("every gateway"), which would move the generation.
    expect(heard.map((named) => named.length)).toEqual([MAX_GATEWAYS_PER_MESSAGE, MAX_GATEWAYS_PER_MESSAGE, 50]);
    expect(heard.flat()).toEqual(ids);
    expect(await view.current()).toBe(afterOwn);
    // One change: a gRPC answer reports one move to its caller.
    expect(catalogGeneration.changesMadeHere()).toBe(movedBefore + 1);
    stop();
  });

  it('stores a new shared value at every change, which a process that cannot follow announcements reads', async () => {
    const values = new Set<string | null>([await catalogGeneration.read(cache)]);
    for (let change = 0; change < 3; change++) {
      await announceCatalogChange(cache, [GATEWAY_A]);
      values.add(await catalogGeneration.read(cache));
    }
    expect(values.size).toBe(4);
    expect(values.has(null)).toBe(true);
  });

  it('is independent of the auth generation', async () => {
    const catalog = catalogGenerationOf(cache);
    const auth = authGenerationOf(cache);
    const [catalogBefore, authBefore] = [await settled(() => catalog.current()), await settled(() => auth.current())];
    await bumpAuthGeneration(cache);
    expect(await catalog.current()).toBe(catalogBefore);
    expect(await auth.current()).not.toBe(authBefore);
    const authAfter = await auth.current();
    await announceCatalogChange(cache);
    expect(await catalog.current()).not.toBe(catalogBefore);
    expect(await auth.current()).toBe(authAfter);
  });

  it('spares a request a second wait for the poll phase once one has ended since it was read, never the first', async () => {
    const view = catalogGenerationOf(cache);
    const auth = authGenerationOf(cache);
    await settled(() => view.current());
    await settled(() => auth.current());

    // A request read now: its first check waits, so a change handled later in the same poll is seen.
    const readAt = pollPhaseMark();
    const first = view.current(readAt);
    view.changedHere();
    const afterChange = await first;

    // The same request's next check (another generation's first, then this one) need not wait: a change made after
    // the wait ended is one the request may or may not see, and it answers with what it knows at once.
    await auth.current(readAt);
    const second = view.current(readAt);
    view.changedHere();
    expect(await second).toBe(afterChange);
    // A request read after that change waits, and sees it.
    expect(await view.current(pollPhaseMark())).not.toBe(afterChange);
  });

  it('after a committed change whose generation cannot be written, says so and moves this process on, without failing', async () => {
    // Redis refusing writes while this process's subscription still works.
    let refuseWrites = false;
    const switchable: Cache = {
      ...cache,
      set: (key, value, ttlMs) => (refuseWrites ? Promise.reject(new Error("READONLY You can't write against a read only replica")) : cache.set(key, value, ttlMs)),
    };
    const view = catalogGenerationOf(switchable);
    const before = await settled(() => view.current());
    const failures = async () =>
      (await metricsRegistry.getSingleMetric('platform_shared_generation_move_failures_total')!.get()).values.find((value) => value.labels.generation === 'catalog')?.value ?? 0;
    const [failedBefore, movedBefore] = [await failures(), catalogGeneration.changesMadeHere()];
    const log = memoryLogger();

    refuseWrites = true;
    await expect(catalogChangeCommitted({ cache: switchable, logger: log.logger }, [GATEWAY_A])).resolves.toBeUndefined();
    expect(await failures()).toBe(failedBefore + 1);
    expect(log.lines).toEqual([expect.objectContaining({ level: 'error', generation: 'catalog', msg: expect.stringMatching(/could not move the shared generation/) })]);
    // This process's view, and the count a gRPC answer reports to its caller, moved on all the same.
    expect(await view.current()).not.toBe(before);
    expect(catalogGeneration.changesMadeHere()).toBe(movedBefore + 1);
  });

  it('refuses a second generation of the same name (a process has one of each)', () => {
    expect(() => new SharedGeneration('catalog')).toThrow(/defined twice/);
    expect(SharedGeneration.named('catalog')).toBe(catalogGeneration);
  });
});

describeWith('redis', 'catalog generation (redis cache)', (url) => {
  let keyPrefix: string;
  let catalogService: Cache;

  beforeEach(() => {
    keyPrefix = uniquePrefix('catgen');
    catalogService = createRedisCache({ url: url(), keyPrefix, logger });
  });
  afterEach(() => catalogService.close());

  it("tells another process's listeners which gateways changed, before that process answers its next request", async () => {
    const edge = createRedisCache({ url: url(), keyPrefix, logger });
    try {
      const view = catalogGenerationOf(edge);
      const before = await settled(() => view.current());
      const heard: string[][] = [];
      view.onAnnouncement((message) => heard.push(gatewaysNamedIn(message)));
      const outside: string[][] = [];
      const unsubscribe = await onCatalogChange(edge, (ids) => outside.push(ids));

      await announceCatalogChange(catalogService, [GATEWAY_A]);
      await waitFor(() => heard.length === 1 && outside.length === 1, 'the announcement');
      expect(heard).toEqual([[GATEWAY_A]]);
      expect(outside).toEqual([[GATEWAY_A]]);
      expect(await view.current()).toBe(before);
      await unsubscribe();
    } finally {
      await edge.close();
    }
  });

  it('says when it trusts its subscription again after a dropped connection or a stall, not when first confirmed', async () => {
    const proxy = await startRedisRelay(url());
    const edgePrefix = uniquePrefix('catgen-edge');
    const edge = createRedisCache({ url: proxy.url, keyPrefix: edgePrefix, logger });
    try {
      const view = catalogGenerationOf(edge);
      let resumed = 0;
      view.onResumed(() => {
        resumed += 1;
      });
      const first = await settled(() => view.current());
      expect(resumed).toBe(0);

      const lapses = async (reason: string) =>
        (await metricsRegistry.getSingleMetric('platform_shared_generation_lapses_total')!.get()).values.find(
          (value) => value.labels.generation === 'catalog' && value.labels.reason === reason,
        )?.value ?? 0;
      const followed = async () =>
        (await metricsRegistry.getSingleMetric('platform_shared_generation_followed')!.get()).values.find((value) => value.labels.generation === 'catalog')?.value;
      const [interruptedBefore, stalledBefore] = [await lapses('interrupted'), await lapses('stalled')];
      expect(await followed()).toBe(1);

      expect(await killRedisConnections(url(), connectionName(edgePrefix, 'subscriber'))).toBe(1);
      await waitFor(() => resumed === 1, 'the resumption after the dropped connection');
      expect(await lapses('interrupted')).toBe(interruptedBefore + 1);
      expect(await followed()).toBe(1);
      const afterDrop = await settled(() => view.current());
      expect(afterDrop).not.toBe(first);

      expect(proxy.freeze('SUBSCRIBE')).toBe(1);
      // Only the overdue probe can tell (after up to about 2.5 s).
      await waitUntil(() => view.current(), (generation) => !generation.startsWith('local:'), 'the stall to be noticed');
      expect(await view.current()).toMatch(/^shared:/);
      expect(resumed).toBe(1);
      expect(await lapses('stalled')).toBe(stalledBefore + 1);
      expect(await followed()).toBe(0);
      proxy.thaw();
      await waitFor(() => resumed === 2, 'the resumption after the stall');
      expect(await settled(() => view.current())).not.toBe(afterDrop);
    } finally {
      await edge.close();
      await proxy.close();
    }
  });

  it('when the subscription stalls, a change whose announcement is held back is still seen, from the shared value', async () => {
    const proxy = await startRedisRelay(url());
    const edge = createRedisCache({ url: proxy.url, keyPrefix, logger });
    try {
      const view = catalogGenerationOf(edge);
      const before = await settled(() => view.current());
      expect(proxy.freeze('SUBSCRIBE')).toBe(1);
      await announceCatalogChange(catalogService, [GATEWAY_A]);
      // Only the overdue probe can tell; from then on every call reads the shared value, which the change moved.
      const now = await waitUntil(() => view.current(), (generation) => generation !== before, 'the generation to move on');
      expect(now).toBe(`shared:${await catalogGeneration.read(catalogService)}`);
      proxy.thaw();
    } finally {
      await edge.close();
      await proxy.close();
    }
  });
});
