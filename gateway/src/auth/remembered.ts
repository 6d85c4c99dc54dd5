import { authGenerationOf, type Cache } from '@platform/runtime';
import { AuthenticationCache } from './authentication-cache';

/**
 * `remember(credential, scope, ask)`: the answer `ask` gives about a credential, remembered while nothing that
 * decides authentication changed (see AuthenticationCache). The generation comes from this process's view of it
 * (runtime `authGenerationOf`: in memory while its subscription is live, else read from the cache). Without a
 * cache — or when the generation cannot be learnt — every call asks: correctness never depends on the cache.
 * Only answers are remembered; refusals (thrown) are not. Callers asking about the same credential under the same
 * generation at the same time share one ask (a generation move makes every open GET stream re-check its token at
 * once: without this, one stream per session was one identity call each).
 */
export function createRemembered<T>(options: { cache?: Cache; ttlMs: number; expiresAt(value: T): string | undefined }) {
  const remembered = new AuthenticationCache<T>({ ttlMs: options.ttlMs, maxEntries: 10_000 });
  // Bounded by the requests in flight: an entry leaves when its ask settles.
  const asking = new Map<string, Promise<T>>();
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
    const flight = `${key}\u0000${generation}`;
    const shared = asking.get(flight);
    if (shared) return shared;
    const answer = (async () => {
      // Stored under the generation read before asking: a change made while asking leaves it unusable at once.
      const value = await ask();
      remembered.set(key, value, generation, options.expiresAt(value));
      return value;
    })();
    asking.set(flight, answer);
    try {
      return await answer;
    } finally {
      asking.delete(flight);
    }
  };
}
