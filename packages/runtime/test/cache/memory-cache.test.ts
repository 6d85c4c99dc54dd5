import { createMemoryCache } from '../../src/cache/memory-cache';
import { createCache } from '../../src/cache/create-cache';
import { createLogger } from '../../src/logging/logger';
import { cacheContract } from './cache-contract';

describe('memory cache', () => {
  cacheContract(async () => {
    // One process shares one memory cache; the second handle is the same instance (a second subscriber).
    const cache = createMemoryCache({ keyPrefix: 'test:' });
    return { cache, peer: cache };
  });

  it('delivers messages asynchronously, never inside the publisher', async () => {
    const cache = createMemoryCache({ keyPrefix: 'test:' });
    const received: string[] = [];
    await cache.subscribe('c', (m) => received.push(m));
    const published = cache.publish('c', 'later');
    expect(received).toEqual([]);
    await published;
    await new Promise((resolve) => setImmediate(resolve));
    expect(received).toEqual(['later']);
    await cache.close();
  });

  it('is what createCache returns for a memory configuration', async () => {
    const cache = createCache({ kind: 'memory', keyPrefix: 'p:' }, createLogger({ level: 'silent' }));
    expect(cache.kind).toBe('memory');
    await cache.close();
  });
});
