import { deleteKafkaState, describeWith, uniquePrefix } from '@platform/test';
import { createKafkaBus } from '../../src/bus';
import { scratchPostgres } from '../db/scratch-postgres';
import { parkedEventsContract } from './parked-events-contract';

describeWith('postgres', 'parked events on Postgres', (adminUrl) => {
  describeWith('kafka', 'and Kafka', (brokers) => {
    const database = scratchPostgres(adminUrl, 5);
    const prefixes: string[] = [];
    afterAll(async () => {
      for (const prefix of prefixes) await deleteKafkaState(brokers(), prefix);
    });

    parkedEventsContract(() => ({
      db: database(),
      openBus: async (logger) => {
        const topicPrefix = uniquePrefix('parked');
        prefixes.push(topicPrefix);
        return createKafkaBus({ brokers: brokers().split(','), clientId: 'parked-events', topicPrefix, logger, retryBackoff: { initialMs: 100, maxMs: 500 } });
      },
    }));
  });
});
