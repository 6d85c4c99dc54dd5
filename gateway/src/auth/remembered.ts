import { authGenerationOf, type Cache } from '@platform/runtime';
import { AuthenticationCache } from './authentication-cache';

/**
 * `remember(credential, scope, ask)`: the answer `ask` gives about a credential, remembered while nothing that
 * decides authentication changed (see AuthenticationCache). The generation comes from this process's view of it
 * (runtime `authGenerationOf`: in memory while its subscription is live, else read from the cache). Without a
 * cache — or when the generation cannot be learnt — every call asks: correctness never depends on the cache.
 * Only answers are remembered; refusals (thrown) are not.
 */
export function createRemembered<T>(options: { cache?: Cache; ttlMs: number; expiresAt(value: T): string | undefined }) {
  const remembered = new AuthenticationCache<T>({ ttlMs: options.ttlMs, maxEntries: 10_000 });
  const generations = options.cache ? authGenerationOf(options.cache) : undefined;
  return async (credential: string, scope: string, ask: () => Promise<T>): Promise<T> => {
    if (!generations) return ask();
    let generation: string | null;
    try {
      generation = await generations.current();
    } catch {
      return ask();
    }
    const key = AuthenticationCache.keyOf(credential, scope);
    const cached = remembered.get(key, generation);
    if (cached !== undefined) return cached;
    // Stored under the generation read before asking: a change made while asking leaves it unusable at once.
    const value = await ask();
    remembered.set(key, value, generation, options.expiresAt(value));
    return value;
  };
}
