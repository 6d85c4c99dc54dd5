export * from './port';
export * from './errors';
export { createMemoryCache, type MemoryCacheOptions } from './memory-cache';
export { createRedisCache, describeRedisUrl, connectionName, type RedisCacheOptions } from './redis-cache';
export { createCache } from './create-cache';
export { readAuthGeneration, bumpAuthGeneration, authGenerationOf, type AuthGeneration } from './auth-generation';
export { announceCatalogChange, onCatalogChange, CATALOG_CHANGED_CHANNEL } from './catalog-signal';
