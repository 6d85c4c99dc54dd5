import { createTestDatabase, deleteKafkaState, describeWith, uniquePrefix } from '@platform/test';
import { createKafkaBus } from '../../src/bus';
import { createPostgresDatabase, type Database } from '../../src/db';
import { createLogger } from '../../src/logging/logger';
import { outboxContract } from './outbox-contract';
import { installTestTracing } from '@platform/test';

const { exporter: spans } = installTestTracing();
const logger = createLogger({ level: 'silent' });

describeWith('postgres', 'outbox on Postgres', (adminUrl) => {
  describeWith('kafka', 'and Kafka', (brokers) => {
    let testDb: { url: string; drop(): Promise<void> };
    let db: Database;
    const prefixes: string[] = [];
    beforeAll(async () => {
      testDb = await createTestDatabase(adminUrl());
      db = createPostgresDatabase({ url: testDb.url, poolMax: 5, logger });
    });
    afterAll(async () => {
      await db?.close();
      await testDb?.drop();
      for (const prefix of prefixes) await deleteKafkaState(brokers(), prefix);
    });

    outboxContract(() => ({
      db,
      spans,
      openBus: async () => {
        const topicPrefix = uniquePrefix('outbox');
        prefixes.push(topicPrefix);
        return createKafkaBus({ brokers: brokers().split(','), clientId: 'outbox-contract', topicPrefix, logger, retryBackoff: { initialMs: 100, maxMs: 500 } });
      },
    }));
  });
});

