import { createPgliteDatabase, type Database } from '../../src/db';
import type { Logger } from '../../src/logging/logger';

/**
 * How long a test file's PGlite may take to start: WebAssembly compilation and initdb take 5-10 s on a quiet 2-core
 * machine and have taken over 30 s on a loaded one, more than a hook's default timeout (the first beforeEach that
 * queried it failed in CI).
 */
export const PGLITE_START_TIMEOUT_MS = 120_000;

/** An in-memory PGlite database, started (its first query answered) before it is returned. */
export async function startedMemoryPglite(logger: Logger): Promise<Database> {
  const db = createPgliteDatabase({ dataDir: 'memory://', logger });
  await db.query('SELECT 1');
  return db;
}
