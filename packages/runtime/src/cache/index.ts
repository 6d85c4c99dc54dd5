export * from './port';
export * from './errors';
export { createMemoryCache, type MemoryCacheOptions } from './memory-cache';
export { createRedisCache, describeRedisUrl, connectionName, type RedisCacheOptions } from './redis-cache';
export { createCache } from './create-cache';
export { SharedGeneration, pollPhaseMark, type GenerationView, type SharedGenerationOptions } from './shared-generation';
export { authGeneration, readAuthGeneration, bumpAuthGeneration, authChangeCommitted, authGenerationOf } from './auth-generation';
export { catalogGeneration, announceCatalogChange, catalogChangeCommitted, catalogGenerationOf, gatewaysNamedIn, MAX_GATEWAYS_PER_MESSAGE, onCatalogChange } from './catalog-generation';
