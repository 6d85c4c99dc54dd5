import { describeWith, uniquePrefix } from '@platform/test';
import { createKafkaBus } from '../../src/bus';
import { busContract, silentLogger } from './bus-contract';

describeWith('kafka', 'Kafka bus', (brokers) => {
  busContract(async () =>
    createKafkaBus({
      brokers: brokers().split(','),
      clientId: 'bus-contract',
      topicPrefix: uniquePrefix('bus'),
      logger: silentLogger,
      retryBackoff: { initialMs: 100, maxMs: 500 },
    }),
  );
});
