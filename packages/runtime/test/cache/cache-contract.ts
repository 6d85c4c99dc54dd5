import type { Cache } from '../../src/cache/port';
import { CacheClosedError } from '../../src/cache/errors';
import { sleep, waitFor } from './wait';

/**
 * Two handles on one shared cache: for Redis, two separate clients with the same key prefix; for memory, the
 * same instance twice (its state is the process's).
 */
export interface CachePair {
  cache: Cache;
  peer: Cache;
}

/** The behaviour every Cache adapter must show; each adapter's test file runs it. */
export function cacheContract(open: () => Promise<CachePair>): void {
  let cache: Cache;
  let peer: Cache;

  beforeEach(async () => {
    ({ cache, peer } = await open());
  });

  afterEach(async () => {
    await cache.close();
    await peer.close();
  });

  describe('increment', () => {
    it('counts from 1 and reports the time left in the window', async () => {
      const first = await cache.increment('hits', 10_000);
      const second = await peer.increment('hits', 10_000);
      const third = await cache.increment('hits', 10_000);
      expect([first.count, second.count, third.count]).toEqual([1, 2, 3]);
      for (const result of [first, second, third]) {
        expect(result.resetInMs).toBeGreaterThan(0);
        expect(result.resetInMs).toBeLessThanOrEqual(10_000);
      }
    });

    it('adds a given amount, and takes back with a negative one, within the same window', async () => {
      const first = await cache.increment('by', 10_000, 3);
      const back = await peer.increment('by', 10_000, -1);
      expect([first.count, back.count]).toEqual([3, 2]);
      expect(back.resetInMs).toBeLessThanOrEqual(first.resetInMs);
      expect((await cache.increment('by', 10_000)).count).toBe(3);
    });

    it('keeps counters of different keys apart', async () => {
      await cache.increment('a', 10_000);
      await cache.increment('a', 10_000);
      expect((await cache.increment('b', 10_000)).count).toBe(1);
    });

    it('resets after the window, which later increments do not extend', async () => {
      // A one-second window leaves a loaded machine half a second between the first two increments.
      expect((await cache.increment('window', 1_000)).count).toBe(1);
      await sleep(500);
      const second = await peer.increment('window', 1_000);
      expect(second.count).toBe(2);
      expect(second.resetInMs).toBeLessThan(1_000);
      // Over 1.1 s after the first increment: past its window, though within a second of the second increment.
      await sleep(600);
      expect((await cache.increment('window', 1_000)).count).toBe(1);
    });

    it('is exact under concurrency from both clients', async () => {
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? cache : peer).increment('concurrent', 10_000)),
      );
      const counts = results.map((r) => r.count).sort((a, b) => a - b);
      expect(counts).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    });
  });

  describe('values', () => {
    it('stores a value visible to the other client and returns null for a missing key', async () => {
      await cache.set('greeting', 'hello', 10_000);
      expect(await peer.get('greeting')).toBe('hello');
      expect(await peer.get('missing')).toBeNull();
    });

    it('overwrites a value', async () => {
      await cache.set('v', 'one', 10_000);
      await peer.set('v', 'two', 10_000);
      expect(await cache.get('v')).toBe('two');
    });

    it('expires a value after its TTL', async () => {
      await cache.set('short', 'soon gone', 150);
      await cache.set('long', 'stays', 10_000);
      await sleep(300);
      expect(await peer.get('short')).toBeNull();
      expect(await peer.get('long')).toBe('stays');
    });

    it('deletes values and counters', async () => {
      await cache.set('doomed', 'x', 10_000);
      await cache.increment('counter', 10_000);
      await peer.delete('doomed');
      await peer.delete('counter');
      await peer.delete('never-existed');
      expect(await cache.get('doomed')).toBeNull();
      expect((await cache.increment('counter', 10_000)).count).toBe(1);
    });
  });

  describe('publish / subscribe', () => {
    it('delivers a message to every subscriber, whichever client published it', async () => {
      const onCache: string[] = [];
      const onPeer: string[] = [];
      await cache.subscribe('news', (m) => onCache.push(m));
      await peer.subscribe('news', (m) => onPeer.push(m));
      await cache.publish('news', 'first');
      await peer.publish('news', 'second');
      await waitFor(() => onCache.length === 2 && onPeer.length === 2, 'both messages on both subscribers');
      expect(onCache).toEqual(['first', 'second']);
      expect(onPeer).toEqual(['first', 'second']);
    });

    it('keeps channels apart', async () => {
      const received: string[] = [];
      await peer.subscribe('mine', (m) => received.push(`mine:${m}`));
      await peer.subscribe('marker', (m) => received.push(`marker:${m}`));
      await cache.publish('other', 'not for me');
      await cache.publish('marker', 'done');
      await waitFor(() => received.length > 0, 'the marker message');
      await sleep(50);
      expect(received).toEqual(['marker:done']);
    });

    it('stops delivering after unsubscribing, without affecting other subscribers', async () => {
      const stopped: string[] = [];
      const staying: string[] = [];
      const unsubscribe = await peer.subscribe('topic', (m) => stopped.push(m));
      await peer.subscribe('topic', (m) => staying.push(m));
      await cache.publish('topic', 'one');
      await waitFor(() => stopped.length === 1 && staying.length === 1, 'the first message');
      await unsubscribe();
      await cache.publish('topic', 'two');
      await waitFor(() => staying.length === 2, 'the second message');
      await sleep(50);
      expect(stopped).toEqual(['one']);
      expect(staying).toEqual(['one', 'two']);
    });

    it('reports a watched subscription live before subscribe resolves, and interrupted when the cache closes', async () => {
      const events: string[] = [];
      const received: string[] = [];
      await peer.subscribe('watched', (m) => received.push(m), {
        onLive: () => events.push('live'),
        onInterrupted: () => events.push('interrupted'),
      });
      expect(events).toEqual(['live']);
      await cache.publish('watched', 'delivered');
      await waitFor(() => received.length === 1, 'the message');
      await peer.close();
      expect(events).toEqual(['live', 'interrupted']);
    });

    it('keeps delivering to others when a handler throws', async () => {
      const received: string[] = [];
      await peer.subscribe('fragile', () => {
        throw new Error('handler bug');
      });
      await peer.subscribe('fragile', (m) => received.push(m));
      await cache.publish('fragile', 'a');
      await cache.publish('fragile', 'b');
      await waitFor(() => received.length === 2, 'both messages');
      expect(received).toEqual(['a', 'b']);
    });
  });

  describe('lifecycle', () => {
    it('answers ping while open and refuses work once closed', async () => {
      await expect(cache.ping()).resolves.toBeUndefined();
      await cache.close();
      await expect(cache.get('anything')).rejects.toBeInstanceOf(CacheClosedError);
      await expect(cache.increment('anything', 1_000)).rejects.toBeInstanceOf(CacheClosedError);
      await expect(cache.close()).resolves.toBeUndefined();
    });
  });
}
