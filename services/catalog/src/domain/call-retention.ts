import { chunkedDeletion, type ClaimedRoundsTask } from '@platform/runtime';
import type { CatalogDeps } from '../deps';
import { deleteExpiredCallRecords } from '../store/calls-store';

/** Records deleted per statement: short transactions, however many have expired. */
const CHUNK = 5_000;
const HOURLY_MS = 3_600_000;

/**
 * Call records older than MCP_CALL_RETENTION_DAYS are deleted every hour (they can hold captured payloads, so they
 * are not kept for ever by default); 0 keeps them. Chunks are deleted until none is left.
 */
export function callRecordRetention(deps: Pick<CatalogDeps, 'db' | 'logger' | 'config'>, pollMs = HOURLY_MS): ClaimedRoundsTask | null {
  const days = deps.config.env.MCP_CALL_RETENTION_DAYS;
  if (days === 0) return null;
  return chunkedDeletion({ name: 'catalog.call-retention', logger: deps.logger, pollMs, deleteChunk: () => deleteExpiredCallRecords(deps.db, days, CHUNK) });
}
