import { describeWith, uniquePrefix } from '@platform/test';
import { createRedisCache } from '../../src/cache/redis-cache';
import { createLogger } from '../../src/logging/logger';
import { rateLimiterContract } from './rate-limiter-contract';

const logger = createLogger({ level: 'silent' });

describeWith('redis', 'rate limiter on Redis', (url) => {
  // Two separate clients sharing one Redis and prefix: two replicas limiting the same caller.
  rateLimiterContract(async () => {
    const keyPrefix = uniquePrefix('ratelimit');
    return {
      cache: createRedisCache({ url: url(), keyPrefix, logger }),
      peer: createRedisCache({ url: url(), keyPrefix, logger }),
    };
  });
});
