import { randomUUID } from 'node:crypto';
import { createMemoryBus } from '../../src/bus';
import type { Database } from '../../src/db';
import { createLogger } from '../../src/logging/logger';
import { outboxContract } from './outbox-contract';
import { installTestTracing } from '@platform/test';
import { PGLITE_START_TIMEOUT_MS, startedMemoryPglite } from '../db/memory-pglite';

const { exporter: spans } = installTestTracing();
const logger = createLogger({ level: 'silent' });

describe('outbox on PGlite and the memory bus', () => {
  let db: Database;
  beforeAll(async () => {
    db = await startedMemoryPglite(logger);
  }, PGLITE_START_TIMEOUT_MS);
  afterAll(() => db.close());

  outboxContract(() => ({
    db,
    spans,
    openBus: async () => createMemoryBus({ topicPrefix: `t-${randomUUID().slice(0, 8)}.`, logger, retryBackoff: { initialMs: 20, maxMs: 200 } }),
  }));
});
