import type { IdentityDeps } from '../../deps';
import { pruneExpiredGrants } from '../../store/oauth-grants-store';

const EVERY_MS = 10 * 60 * 1000;
const lastRun = new WeakMap<IdentityDeps, number>();

/**
 * Deletes expired codes, tokens and registrations at most every 10 minutes per process, in the background of a
 * write that makes new ones (so the tables stay bounded without a scheduler). Failures are only logged.
 */
export function prunePeriodically(deps: IdentityDeps): void {
  const now = Date.now();
  if (now - (lastRun.get(deps) ?? 0) < EVERY_MS) return;
  lastRun.set(deps, now);
  pruneExpiredGrants(deps.db).catch((error: unknown) => deps.logger.warn({ err: (error as Error).message }, 'pruning expired OAuth grants failed'));
}
