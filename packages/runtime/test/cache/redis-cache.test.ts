import { createServer, type AddressInfo, type Socket } from 'node:net';
import { describeWith, killRedisConnections, uniquePrefix } from '@platform/test';
import type { Cache } from '../../src/cache/port';
import { createCache } from '../../src/cache/create-cache';
import { CacheTimeoutError } from '../../src/cache/errors';
import { connectionName, createRedisCache, describeRedisUrl } from '../../src/cache/redis-cache';
import { createLogger } from '../../src/logging/logger';
import { cacheContract } from './cache-contract';
import { sleep, waitFor } from './wait';

const logger = createLogger({ level: 'silent' });

describeWith('redis', 'redis cache', (url) => {
  // Two separate clients on the same Redis and prefix, as two replicas would be.
  cacheContract(async () => {
    const keyPrefix = uniquePrefix('cache');
    return {
      cache: createRedisCache({ url: url(), keyPrefix, logger }),
      peer: createRedisCache({ url: url(), keyPrefix, logger }),
    };
  });

  describe('key prefixes', () => {
    let mine: Cache;
    let theirs: Cache;

    beforeEach(() => {
      mine = createRedisCache({ url: url(), keyPrefix: uniquePrefix('mine'), logger });
      theirs = createRedisCache({ url: url(), keyPrefix: uniquePrefix('theirs'), logger });
    });

    afterEach(async () => {
      await mine.close();
      await theirs.close();
    });

    it('keeps keys and channels of different prefixes apart', async () => {
      await mine.set('shared-name', 'mine', 10_000);
      await mine.increment('counter', 10_000);
      expect(await theirs.get('shared-name')).toBeNull();
      expect((await theirs.increment('counter', 10_000)).count).toBe(1);

      const heard: string[] = [];
      await theirs.subscribe('channel', (m) => heard.push(m));
      await mine.publish('channel', 'not for them');
      await sleep(100);
      expect(heard).toEqual([]);
    });
  });

  describe('a watched subscription whose connection is killed', () => {
    let cache: Cache;
    const keyPrefix = uniquePrefix('killed');

    beforeEach(() => {
      cache = createRedisCache({ url: url(), keyPrefix, logger });
    });

    afterEach(() => cache.close());

    it('reports the interruption, then live again once re-subscribed, and delivers again', async () => {
      const events: string[] = [];
      const received: string[] = [];
      await cache.subscribe('watched', (m) => received.push(m), {
        onLive: () => events.push('live'),
        onInterrupted: () => events.push('interrupted'),
      });
      expect(events).toEqual(['live']);

      expect(await killRedisConnections(url(), connectionName(keyPrefix, 'subscriber'))).toBe(1);
      await waitFor(() => events.length === 3, 'the interruption and the resumption');
      expect(events).toEqual(['live', 'interrupted', 'live']);

      await cache.publish('watched', 'after');
      await waitFor(() => received.length === 1, 'a message after the resumption');
      expect(received).toEqual(['after']);
    });
  });

  it('is what createCache returns for a redis configuration', async () => {
    const cache = createCache({ kind: 'redis', url: url(), keyPrefix: uniquePrefix('factory') }, logger);
    expect(cache.kind).toBe('redis');
    await cache.ping();
    await cache.close();
  });
});

describe('redis cache against a Redis that stops answering', () => {
  interface FakeRedis {
    url: string;
    /** The names of the commands received (after the handshake), in order. */
    received: string[];
    close(): Promise<void>;
  }

  /**
   * A stand-in for a Redis server gone wrong: answers the connection handshake (HELLO, CLIENT …, SELECT), PING and
   * SUBSCRIBE, and records every other command, answering it with an error when `refuseOthers` or else never.
   * `port` reopens one on the same address.
   */
  function fakeRedis(options: { port?: number; refuseOthers?: boolean } = {}): Promise<FakeRedis> {
    const sockets = new Set<Socket>();
    const received: string[] = [];
    const server = createServer((socket) => {
      sockets.add(socket);
      let buffered = '';
      socket.on('data', (chunk) => {
        buffered += chunk.toString('latin1');
        // Each command is an array of bulk strings: *N, then $len and the text of each argument.
        for (;;) {
          const lines = buffered.split('\r\n');
          const count = /^\*(\d+)$/.exec(lines[0] ?? '');
          if (!count || lines.length < 1 + 2 * Number(count[1]) + 1) return;
          const name = lines[2]!.toUpperCase();
          buffered = lines.slice(1 + 2 * Number(count[1])).join('\r\n');
          if (name === 'HELLO') socket.write('%2\r\n+server\r\n+redis\r\n+proto\r\n:3\r\n');
          else if (name === 'CLIENT' || name === 'SELECT') socket.write('+OK\r\n');
          else if (name === 'PING') socket.write('+PONG\r\n');
          else if (name === 'SUBSCRIBE') socket.write(`>3\r\n$9\r\nsubscribe\r\n$${lines[4]!.length}\r\n${lines[4]}\r\n:1\r\n`);
          else {
            received.push(name);
            if (options.refuseOthers) socket.write('-ERR refused by the test\r\n');
          }
        }
      });
    });
    return new Promise((resolve) => {
      server.listen(options.port ?? 0, '127.0.0.1', () => {
        const address = server.address() as AddressInfo;
        resolve({
          url: `redis://127.0.0.1:${address.port}`,
          received,
          close: () => {
            // Stop accepting first: the client reconnects as soon as its connection is cut.
            const closed = new Promise<void>((done) => server.close(() => done()));
            for (const socket of sockets) socket.destroy();
            return closed;
          },
        });
      });
    });
  }

  it('rejects a command that gets no answer with CacheTimeoutError', async () => {
    const redis = await fakeRedis();
    const cache = createRedisCache({ url: redis.url, keyPrefix: 'stuck:', logger, commandTimeoutMs: 200 });
    try {
      await expect(cache.get('anything')).rejects.toBeInstanceOf(CacheTimeoutError);
      await expect(cache.increment('counter', 1_000)).rejects.toBeInstanceOf(CacheTimeoutError);
    } finally {
      // Closing does not wait for the answers the stuck server never sends.
      await cache.close();
      await redis.close();
    }
  });

  it('does not run a command that timed out while Redis was unreachable once it is back', async () => {
    const first = await fakeRedis();
    const cache = createRedisCache({ url: first.url, keyPrefix: 'away:', logger, commandTimeoutMs: 200 });
    let second: FakeRedis | undefined;
    try {
      await cache.ping();
      let interrupted = false;
      await cache.subscribe('any', () => undefined, { onInterrupted: () => (interrupted = true) });
      await first.close();
      // Both connections see the server go at the same moment: once the subscriber has, the command connection
      // is reconnecting too.
      await waitFor(() => interrupted, 'the connections to drop');
      await sleep(50);
      // Issued while the client is reconnecting: it fails at once, and is never sent later.
      await expect(cache.increment('counter', 1_000)).rejects.toThrow();

      second = await fakeRedis({ port: Number(new URL(first.url).port), refuseOthers: true });
      // Once a PING is answered the client has reconnected and sent everything still queued before it.
      for (;;) {
        try {
          await cache.ping();
          break;
        } catch {
          // still reconnecting (its back-off grows): a command fails at once meanwhile, so wait before trying again
          await sleep(50);
        }
      }
      expect(second.received).toEqual([]);
    } finally {
      await cache.close();
      await second?.close();
    }
  });
});

describe('describeRedisUrl', () => {
  it('drops the credentials', () => {
    const described = describeRedisUrl('redis://user:hunter2-secret@redis.internal:6380/2');
    expect(described).toBe('redis://redis.internal:6380/2');
    expect(described).not.toContain('hunter2');
  });
});
