import { readAuthGeneration, type Cache } from '@platform/runtime';
import { AuthenticationCache } from './authentication-cache';

/**
 * `remember(credential, scope, ask)`: the answer `ask` gives about a credential, remembered while nothing that
 * decides authentication changed (see AuthenticationCache). Without a cache — or when the shared generation
 * cannot be read — every call asks: correctness never depends on the cache. Only answers are remembered;
 * refusals (thrown) are not.
 */
export function createRemembered<T>(options: { cache?: Cache; ttlMs: number; expiresAt(value: T): string | undefined }) {
  const remembered = new AuthenticationCache<T>({ ttlMs: options.ttlMs, maxEntries: 10_000 });
  return async (credential: string, scope: string, ask: () => Promise<T>): Promise<T> => {
    if (!options.cache) return ask();
    let generation: string | null;
    try {
      generation = await readAuthGeneration(options.cache);
    } catch {
      return ask();
    }
    const key = AuthenticationCache.keyOf(credential, scope);
    const cached = remembered.get(key, generation);
    if (cached !== undefined) return cached;
    const value = await ask();
    remembered.set(key, value, generation, options.expiresAt(value));
    return value;
  };
}
