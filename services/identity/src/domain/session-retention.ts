import { chunkedDeletion, type ClaimedRoundsTask } from '@platform/runtime';
import type { IdentityDeps } from '../deps';
import { deleteSessionsPastRetention } from '../store/sessions-store';

/** Sessions deleted per statement: short transactions, however many are due. */
const CHUNK = 5_000;
const HOURLY_MS = 3_600_000;

/**
 * Browser sessions that expired or were ended more than SESSION_RETENTION_DAYS ago are deleted every hour (they hold
 * client addresses and user agents, and no use is made of them once over); 0 keeps them. A round's "claim" is one
 * chunk, deleted as it is claimed, until none is left; replicas running at once delete different rows.
 */
export function sessionRetention(deps: Pick<IdentityDeps, 'db' | 'logger' | 'config'>, pollMs = HOURLY_MS, chunk = CHUNK): ClaimedRoundsTask | null {
  const days = deps.config.env.SESSION_RETENTION_DAYS;
  if (days === 0) return null;
  return chunkedDeletion({ name: 'identity.session-retention', logger: deps.logger, pollMs, deleteChunk: () => deleteSessionsPastRetention(deps.db, days, chunk) });
}
