import type { PlatformConfig } from '../config/load';
import type { Logger } from '../logging/logger';
import { createMemoryCache } from './memory-cache';
import type { Cache } from './port';
import { createRedisCache } from './redis-cache';

/** The adapter the configuration names: Redis when REDIS_URL is set, otherwise in-memory (`--target=all` only). */
export function createCache(config: PlatformConfig['cache'], logger: Logger): Cache {
  switch (config.kind) {
    case 'redis':
      return createRedisCache({ url: config.url, keyPrefix: config.keyPrefix, logger });
    case 'memory':
      return createMemoryCache({ keyPrefix: config.keyPrefix, logger });
  }
}
