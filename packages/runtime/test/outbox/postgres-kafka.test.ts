import { deleteKafkaState, describeWith, uniquePrefix } from '@platform/test';
import { createKafkaBus } from '../../src/bus';
import { createLogger } from '../../src/logging/logger';
import { scratchPostgres } from '../db/scratch-postgres';
import { outboxContract } from './outbox-contract';
import { installTestTracing } from '@platform/test';

const { exporter: spans } = installTestTracing();
const logger = createLogger({ level: 'silent' });

describeWith('postgres', 'outbox on Postgres', (adminUrl) => {
  describeWith('kafka', 'and Kafka', (brokers) => {
    const database = scratchPostgres(adminUrl, 5);
    const prefixes: string[] = [];
    afterAll(async () => {
      for (const prefix of prefixes) await deleteKafkaState(brokers(), prefix);
    });

    outboxContract(() => ({
      db: database(),
      spans,
      openBus: async () => {
        const topicPrefix = uniquePrefix('outbox');
        prefixes.push(topicPrefix);
        return createKafkaBus({ brokers: brokers().split(','), clientId: 'outbox-contract', topicPrefix, logger, retryBackoff: { initialMs: 100, maxMs: 500 } });
      },
    }));
  });
});

