import { chunkedDeletion, type ClaimedRoundsTask } from '@platform/runtime';
import type { IdentityDeps } from '../../deps';
import { deleteExpiredGrants } from '../../store/oauth-grants-store';

/** Rows deleted per statement: short transactions, however many have expired. */
const CHUNK = 5_000;
const EVERY_MS = 10 * 60 * 1000;

/**
 * Expired OAuth codes, tokens and unused registrations are deleted every 10 minutes, a chunk of each per statement,
 * until none is left (a round's "claim" is one chunk, deleted as it is claimed). Replicas running at the same time
 * delete different rows, never wait on each other's, and stop when nothing is left: the work is shared, not repeated.
 */
export function expiredGrantPruning(deps: Pick<IdentityDeps, 'db' | 'logger'>, pollMs = EVERY_MS, chunk = CHUNK): ClaimedRoundsTask {
  return chunkedDeletion({ name: 'identity.oauth-grant-pruning', logger: deps.logger, pollMs, deleteChunk: () => deleteExpiredGrants(deps.db, chunk) });
}
