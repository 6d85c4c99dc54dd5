import { authChangeCommitted } from '../cache/auth-generation';
import type { Cache } from '../cache/port';
import type { Logger } from '../logging/logger';
import { isReadMethod } from '../grpc/read-methods';

/**
 * Wraps a service's handlers so that, after every successful change, the shared auth generation moves on and
 * edges that remember authentications (gateway/src/auth/remembered.ts) check again at the next request. Reads
 * and the changes named in `leavesAuthenticationUnchanged` (ones that only add) are left alone; any other
 * method moves it, the safe default for a method added later. A generation that cannot be moved is logged, never
 * the call's failure (SharedGeneration.moveAfterCommit).
 */
export function invalidatingAuthentication<T extends object>(deps: { cache: Cache; logger: Logger }, handlers: T, leavesAuthenticationUnchanged: readonly string[] = []): T {
  const unchanged = new Set(leavesAuthenticationUnchanged);
  const wrapped: Record<string, unknown> = {};
  for (const [name, handler] of Object.entries(handlers) as [string, (...args: unknown[]) => Promise<unknown>][]) {
    wrapped[name] =
      isReadMethod(name) || unchanged.has(name)
        ? handler
        : async (...args: unknown[]) => {
            const result = await handler(...args);
            await authChangeCommitted(deps);
            return result;
          };
  }
  return wrapped as T;
}
