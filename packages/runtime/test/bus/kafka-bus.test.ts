import { setTimeout as sleep } from 'node:timers/promises';
import { deleteKafkaState, describeWith, memoryLogger, uniquePrefix } from '@platform/test';
import { createKafkaBus } from '../../src/bus';
import type { EventBus, Subscription } from '../../src/bus';
import { busContract, silentLogger } from './bus-contract';
import { waitFor } from './wait-for';

describeWith('kafka', 'Kafka bus', (brokers) => {
  const prefixes: string[] = [];
  const openBus = () => {
    const topicPrefix = uniquePrefix('bus');
    prefixes.push(topicPrefix);
    return createKafkaBus({
      brokers: brokers().split(','),
      clientId: 'bus-contract',
      topicPrefix,
      logger: silentLogger,
      retryBackoff: { initialMs: 100, maxMs: 500 },
    });
  };
  afterAll(async () => {
    for (const prefix of prefixes) await deleteKafkaState(brokers(), prefix);
  });

  busContract(async () => openBus());

  it('names a consumer whose disconnect waited long (here for its handler) in a warning', async () => {
    const { logger, lines } = memoryLogger();
    const topicPrefix = uniquePrefix('bus');
    prefixes.push(topicPrefix);
    const bus = createKafkaBus({ brokers: brokers().split(','), clientId: 'slow-stop', topicPrefix, logger, slowDisconnectMs: 500 });
    try {
      let handling = false;
      const subscription = await bus.subscribe({
        groupId: 'slow-handler',
        topics: ['slow.v1'],
        handler: async () => {
          handling = true;
          // Longer than the threshold: kafkajs lets the handler in flight finish before it leaves the group.
          await sleep(1_500);
        },
      });
      await bus.publish([{ topic: 'slow.v1', key: null, value: 'x', headers: {} }]);
      await waitFor(() => expect(handling).toBe(true), 10_000);
      await subscription.close();
      const warned = lines.filter((line) => line.msg === 'kafka consumer was slow to disconnect');
      expect(warned).toEqual([expect.objectContaining({ level: 'warn', groupId: 'slow-handler', ms: expect.any(Number) })]);
      expect(warned[0]!.ms).toBeGreaterThanOrEqual(500);
    } finally {
      await bus.close();
    }
  }, 60_000);

  describe('a batch consumer that gathers (gatherMs)', () => {
    let bus: EventBus;
    const subscriptions: Subscription[] = [];
    beforeEach(() => {
      bus = openBus();
    });
    afterEach(async () => {
      await Promise.all(subscriptions.splice(0).map((s) => s.close()));
      await bus.close();
    });

    /** Publishes three messages 100 ms apart to a batch consumer and returns the batches it was handed. */
    async function batchesOf(gatherMs: number | undefined): Promise<string[][]> {
      const batches: string[][] = [];
      const topic = `gather-${gatherMs ?? 'none'}.v1`;
      subscriptions.push(
        await bus.subscribe({
          groupId: `gatherers-${gatherMs ?? 'none'}`,
          topics: [topic],
          handler: () => Promise.reject(new Error('the batch handler is used')),
          batch: { maxBatch: 100, ...(gatherMs ? { gatherMs } : {}), handler: async (messages) => void batches.push(messages.map((m) => m.value)) },
        }),
      );
      for (const value of ['1', '2', '3']) {
        await bus.publish([{ topic, key: 'same', value, headers: {} }]);
        await sleep(100);
      }
      await waitFor(() => expect(batches.flat()).toEqual(['1', '2', '3']), 10_000);
      return batches;
    }

    it('is handed messages published apart together, where a consumer that does not gather gets each as it comes', async () => {
      // Without gathering the broker answers a fetch as soon as a message is there: one message per batch.
      expect(await batchesOf(undefined)).toEqual([['1'], ['2'], ['3']]);
      // Gathering, the broker holds the fetch for up to 2 s: all three together, or two and one if a fetch ended
      // between them; never one at a time.
      expect((await batchesOf(2_000)).length).toBeLessThanOrEqual(2);
    }, 60_000);
  });
});
