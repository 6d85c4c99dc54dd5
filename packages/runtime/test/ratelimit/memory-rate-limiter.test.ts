import { createMemoryCache } from '../../src/cache/memory-cache';
import { rateLimiterContract } from './rate-limiter-contract';

describe('rate limiter on the memory cache', () => {
  rateLimiterContract(async () => {
    const cache = createMemoryCache({ keyPrefix: 'test:' });
    return { cache, peer: cache };
  });
});
