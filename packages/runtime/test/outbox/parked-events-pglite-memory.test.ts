import { randomUUID } from 'node:crypto';
import { createMemoryBus } from '../../src/bus';
import type { Database } from '../../src/db';
import { createLogger } from '../../src/logging/logger';
import { PGLITE_START_TIMEOUT_MS, startedMemoryPglite } from '../db/memory-pglite';
import { parkedEventsContract } from './parked-events-contract';

/** The embedded default (`--target=all` without DATABASE_URL or KAFKA_BROKERS) consumes the same way. */
describe('parked events on PGlite and the memory bus', () => {
  let db: Database;
  beforeAll(async () => {
    db = await startedMemoryPglite(createLogger({ level: 'silent' }));
  }, PGLITE_START_TIMEOUT_MS);
  afterAll(() => db.close());

  parkedEventsContract(() => ({
    db,
    openBus: async (logger) => createMemoryBus({ topicPrefix: `t-${randomUUID().slice(0, 8)}.`, logger, retryBackoff: { initialMs: 20, maxMs: 200 } }),
  }));
});
