import { describeWith, uniquePrefix } from '@platform/test';
import type { Cache } from '../../src/cache/port';
import { createCache } from '../../src/cache/create-cache';
import { createRedisCache, describeRedisUrl } from '../../src/cache/redis-cache';
import { createLogger } from '../../src/logging/logger';
import { cacheContract } from './cache-contract';
import { sleep } from './wait';

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

  it('is what createCache returns for a redis configuration', async () => {
    const cache = createCache({ kind: 'redis', url: url(), keyPrefix: uniquePrefix('factory') }, logger);
    expect(cache.kind).toBe('redis');
    await cache.ping();
    await cache.close();
  });
});

describe('describeRedisUrl', () => {
  it('drops the credentials', () => {
    const described = describeRedisUrl('redis://user:hunter2-secret@redis.internal:6380/2');
    expect(described).toBe('redis://redis.internal:6380/2');
    expect(described).not.toContain('hunter2');
  });
});
