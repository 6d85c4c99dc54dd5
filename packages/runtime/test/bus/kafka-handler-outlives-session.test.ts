import { setTimeout as sleep } from 'node:timers/promises';
import { deleteKafkaState, describeWith, uniquePrefix } from '@platform/test';
import { createKafkaBus } from '../../src/bus';
import { silentLogger } from './bus-contract';
import { waitFor } from './wait-for';

/**
 * A handler can take longer than the consumer group's session (10 s: a database that stalls mid-statement, until the
 * statement's timeout). The broker then evicts the member, and the commit after the handler is refused
 * (UNKNOWN_MEMBER_ID). kafkajs wraps that refusal in a non-retriable error, which stopped the consumer for good: the
 * process kept running and ready, but its group handled nothing more until a restart.
 */
describeWith('kafka', 'Kafka bus: a handler that outlives its group session', (brokers) => {
  const topicPrefix = uniquePrefix('bus');
  afterAll(async () => {
    await deleteKafkaState(brokers(), topicPrefix);
  });

  it('rejoins the group and goes on consuming, handling the message it could not commit again', async () => {
    const bus = createKafkaBus({ brokers: brokers().split(','), clientId: 'outlives-session', topicPrefix, logger: silentLogger, retryBackoff: { initialMs: 100, maxMs: 500 } });
    try {
      const handled: string[] = [];
      let stalled = false;
      const subscription = await bus.subscribe({
        groupId: 'outlives-session',
        topics: ['outlives-session.v1'],
        handler: async (message) => {
          if (!stalled) {
            stalled = true;
            // Twice the session timeout: the broker has evicted the member by the time the handler returns.
            await sleep(20_000);
          }
          handled.push(message.value);
        },
      });
      await bus.publish([{ topic: 'outlives-session.v1', key: 'one-partition', value: 'first', headers: {} }]);
      await waitFor(() => expect(handled).toContain('first'), 60_000);
      await bus.publish([{ topic: 'outlives-session.v1', key: 'one-partition', value: 'second', headers: {} }]);
      await waitFor(() => expect(handled).toContain('second'), 60_000);
      // The first was not committed, so it may come again (consumers are idempotent by event id); nothing is lost.
      expect(new Set(handled)).toEqual(new Set(['first', 'second']));
      await subscription.close();
    } finally {
      await bus.close();
    }
  }, 180_000);
});
