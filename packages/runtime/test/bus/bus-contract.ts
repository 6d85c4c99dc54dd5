import { createLogger } from '../../src/logging/logger';
import { MessageNotHandledError, type EventBus, type ReceivedMessage, type Subscription } from '../../src/bus';
import { eventHandlerConsecutiveFailures } from '../../src/telemetry/metrics';
import { waitFor } from './wait-for';

export const silentLogger = createLogger({ level: 'silent' });

/**
 * The in-process bus's publish waits for the consumers and rejects when a handler fails (the group still retries the
 * message); Kafka's resolves once stored. For tests of redelivery, both are fine.
 */
export function unlessNotHandled(error: unknown): void {
  if (!(error instanceof MessageNotHandledError)) throw error;
}

/** The behaviour every EventBus adapter must share. `openBus` gives a bus with a fresh, unique topic prefix. */
export function busContract(openBus: () => Promise<EventBus>): void {
  let bus: EventBus;
  const subscriptions: Subscription[] = [];
  beforeEach(async () => {
    bus = await openBus();
  });
  afterEach(async () => {
    await Promise.all(subscriptions.splice(0).map((s) => s.close()));
    await bus.close();
  });

  const subscribe = async (groupId: string, topics: string[], handler: (m: ReceivedMessage) => Promise<void>) => {
    const subscription = await bus.subscribe({ groupId, topics, handler });
    subscriptions.push(subscription);
    return subscription;
  };

  it('delivers batches in order, at most maxBatch at a time, and a rejected batch again as a whole', async () => {
    const batches: string[][] = [];
    let failOnce = true;
    subscriptions.push(
      await bus.subscribe({
        groupId: 'batchers',
        topics: ['batch.v1'],
        handler: () => Promise.reject(new Error('the batch handler is used')),
        batch: {
          maxBatch: 3,
          handler: async (messages) => {
            if (failOnce && messages.some((m) => m.value === '5')) {
              failOnce = false;
              throw new Error('transient');
            }
            batches.push(messages.map((m) => m.value));
          },
        },
      }),
    );
    await bus
      .publish(['1', '2', '3', '4', '5', '6', '7'].map((value) => ({ topic: 'batch.v1', key: 'same', value, headers: {} })))
      .catch(unlessNotHandled);
    await waitFor(() => expect(batches.flat()).toEqual(['1', '2', '3', '4', '5', '6', '7']));
    expect(batches.every((batch) => batch.length >= 1 && batch.length <= 3)).toBe(true);
  });

  it('pings', async () => {
    await expect(bus.ping()).resolves.toBeUndefined();
  });

  it('delivers published messages with key, value, headers and the logical topic name', async () => {
    const received: ReceivedMessage[] = [];
    await subscribe('readers', ['alpha.v1'], async (m) => void received.push(m));
    await bus.publish([
      { topic: 'alpha.v1', key: 'k1', value: 'one', headers: { traceparent: 'tp-1', 'event-id': 'e1' } },
      { topic: 'alpha.v1', key: 'k1', value: 'two', headers: {} },
    ]);
    await waitFor(() => expect(received).toHaveLength(2));
    expect(received.map((m) => [m.topic, m.key, m.value])).toEqual([
      ['alpha.v1', 'k1', 'one'],
      ['alpha.v1', 'k1', 'two'],
    ]);
    expect(received[0]!.headers).toEqual({ traceparent: 'tp-1', 'event-id': 'e1' });
    expect(typeof received[0]!.offset).toBe('string');
  });

  it('delivers a large publish intact (the Kafka adapter sends it compressed)', async () => {
    const received: ReceivedMessage[] = [];
    await subscribe('large-readers', ['large.v1'], async (m) => void received.push(m));
    // Repetitive JSON, as batched call records are, well above the compression threshold; one value with UTF-8.
    const record = JSON.stringify({ gateway: 'gw', server: 'srv', principal: { email: 'ana@example.test', name: 'Ana Łukasiewicz' } });
    const values = Array.from({ length: 3 }, (_, i) => `[${Array.from({ length: 400 }, () => record).join(',')},${i}]`);
    await bus.publish(values.map((value) => ({ topic: 'large.v1', key: 'k', value, headers: { 'event-id': 'big' } })));
    await waitFor(() => expect(received).toHaveLength(3));
    expect(received.map((m) => m.value)).toEqual(values);
    expect(received[0]!.headers).toEqual({ 'event-id': 'big' });
  });

  it('gives every group every message', async () => {
    const a: string[] = [];
    const b: string[] = [];
    await subscribe('group-a', ['beta.v1'], async (m) => void a.push(m.value));
    await subscribe('group-b', ['beta.v1'], async (m) => void b.push(m.value));
    await bus.publish(['1', '2', '3'].map((value) => ({ topic: 'beta.v1', key: 'same', value, headers: {} })));
    await waitFor(() => {
      expect(a).toEqual(['1', '2', '3']);
      expect(b).toEqual(['1', '2', '3']);
    });
  });

  it('shares one group between its members: each message is handled by exactly one', async () => {
    const first: string[] = [];
    const second: string[] = [];
    await subscribe('workers', ['gamma.v1'], async (m) => void first.push(m.value));
    await subscribe('workers', ['gamma.v1'], async (m) => void second.push(m.value));
    const values = Array.from({ length: 30 }, (_, i) => String(i));
    await bus.publish(values.map((value) => ({ topic: 'gamma.v1', key: `key-${value}`, value, headers: {} })));
    await waitFor(() => expect(first.length + second.length).toBe(values.length));
    expect([...first, ...second].sort()).toEqual([...values].sort());
    expect(first.length).toBeGreaterThan(0);
    expect(second.length).toBeGreaterThan(0);
  });

  it('delivers a message again when its handler rejects, before the next one, counting its failures in a row', async () => {
    const attempts: string[] = [];
    let failuresLeft = 2;
    const failuresInARow = async () =>
      (await eventHandlerConsecutiveFailures.get()).values.find((v) => v.labels.group === 'flaky' && v.labels.topic === 'delta.v1')?.value;
    let failuresSeen: number | undefined;
    await subscribe('flaky', ['delta.v1'], async (m) => {
      attempts.push(m.value);
      if (m.value === 'first' && failuresLeft-- > 0) throw new Error('not yet');
      if (m.value === 'first') failuresSeen = await failuresInARow();
    });
    await bus
      .publish([
        { topic: 'delta.v1', key: 'k', value: 'first', headers: {} },
        { topic: 'delta.v1', key: 'k', value: 'second', headers: {} },
      ])
      .catch(unlessNotHandled);
    await waitFor(() => expect(attempts).toEqual(['first', 'first', 'first', 'second']));
    // While the first message failed, platform_event_handler_consecutive_failures said so; handled, it is back to 0.
    expect(failuresSeen).toBe(2);
    await waitFor(async () => expect(await failuresInARow()).toBe(0));
  });

  it('keeps order per key', async () => {
    const seen = new Map<string, number[]>();
    await subscribe('ordered', ['epsilon.v1'], async (m) => {
      seen.set(m.key!, [...(seen.get(m.key!) ?? []), Number(m.value)]);
    });
    const messages = Array.from({ length: 40 }, (_, i) => ({ topic: 'epsilon.v1', key: `k${i % 4}`, value: String(i), headers: {} }));
    await bus.publish(messages.slice(0, 20));
    await bus.publish(messages.slice(20));
    await waitFor(() => expect([...seen.values()].flat()).toHaveLength(40));
    for (const [key, values] of seen) {
      expect(values).toEqual(messages.filter((m) => m.key === key).map((m) => Number(m.value)));
    }
  });

  it('resumes a group where it left off after its subscription closes', async () => {
    const before: string[] = [];
    const first = await bus.subscribe({ groupId: 'resumer', topics: ['zeta.v1'], handler: async (m) => void before.push(m.value) });
    await bus.publish([{ topic: 'zeta.v1', key: 'k', value: 'a', headers: {} }]);
    await waitFor(() => expect(before).toEqual(['a']));
    await first.close();
    await bus.publish([{ topic: 'zeta.v1', key: 'k', value: 'b', headers: {} }]);
    const after: string[] = [];
    await subscribe('resumer', ['zeta.v1'], async (m) => void after.push(m.value));
    await waitFor(() => expect(after).toEqual(['b']));
  });
}
