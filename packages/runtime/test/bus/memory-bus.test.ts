import { randomUUID } from 'node:crypto';
import { createMemoryBus, type ReceivedMessage } from '../../src/bus';
import { busContract, silentLogger } from './bus-contract';
import { waitFor } from './wait-for';

const prefix = () => `t-${randomUUID().slice(0, 8)}.`;

describe('memory bus', () => {
  busContract(async () => createMemoryBus({ topicPrefix: prefix(), logger: silentLogger, retryBackoff: { initialMs: 20, maxMs: 200 } }));

  it('connects buses with the same prefix, and isolates different prefixes', async () => {
    const shared = prefix();
    const producer = createMemoryBus({ topicPrefix: shared, logger: silentLogger });
    const consumer = createMemoryBus({ topicPrefix: shared, logger: silentLogger });
    const stranger = createMemoryBus({ topicPrefix: prefix(), logger: silentLogger });
    const got: ReceivedMessage[] = [];
    const strangerGot: ReceivedMessage[] = [];
    await consumer.subscribe({ groupId: 'g', topics: ['t.v1'], handler: async (m) => void got.push(m) });
    await stranger.subscribe({ groupId: 'g', topics: ['t.v1'], handler: async (m) => void strangerGot.push(m) });
    await producer.publish([{ topic: 't.v1', value: 'hello', headers: {} }]);
    await waitFor(() => expect(got.map((m) => m.value)).toEqual(['hello']));
    expect(strangerGot).toEqual([]);
    await Promise.all([producer.close(), consumer.close(), stranger.close()]);
  });

  it('refuses to publish once closed', async () => {
    const bus = createMemoryBus({ topicPrefix: prefix(), logger: silentLogger });
    await bus.close();
    await expect(bus.publish([{ topic: 't.v1', value: 'x', headers: {} }])).rejects.toThrow('closed');
  });
});
