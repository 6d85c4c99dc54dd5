import { randomUUID } from 'node:crypto';
import { createMemoryBus, MessageNotHandledError, type BusMessage, type EventBus, type ReceivedMessage } from '../../src/bus';
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

  describe('publish resolves once the consumers have handled the messages', () => {
    let bus: EventBus;
    beforeEach(() => {
      bus = createMemoryBus({ topicPrefix: prefix(), logger: silentLogger, retryBackoff: { initialMs: 20, maxMs: 200 } });
    });
    afterEach(() => bus.close());

    const message = (value: string, eventId?: string): BusMessage => ({
      topic: 't.v1',
      key: 'k',
      value,
      headers: eventId ? { 'event-id': eventId } : {},
    });
    /** Tracks whether a promise has settled, and how. */
    const track = (promise: Promise<unknown>) => {
      const state = { settled: false as boolean | 'rejected' };
      promise.then(
        () => (state.settled = true),
        () => (state.settled = 'rejected'),
      );
      return state;
    };
    function gate() {
      let open!: () => void;
      const opened = new Promise<void>((resolve) => (open = resolve));
      return { opened, open };
    }

    it('waits for every group with a member, not only the first to finish', async () => {
      const fast: string[] = [];
      const slow: string[] = [];
      const entered = gate();
      const release = gate();
      await bus.subscribe({ groupId: 'fast', topics: ['t.v1'], handler: async (m) => void fast.push(m.value) });
      await bus.subscribe({
        groupId: 'slow',
        topics: ['t.v1'],
        handler: async (m) => {
          entered.open();
          await release.opened;
          slow.push(m.value);
        },
      });
      const publish = bus.publish([message('a')]);
      const state = track(publish);
      await entered.opened;
      await waitFor(() => expect(fast).toEqual(['a']));
      // The slow group is still handling it: the message is not safe yet.
      await new Promise((resolve) => setImmediate(resolve));
      expect(state.settled).toBe(false);
      release.open();
      await publish;
      expect(slow).toEqual(['a']);
    });

    it('rejects when a handler fails, while the group still gets the message again', async () => {
      const attempts: string[] = [];
      await bus.subscribe({
        groupId: 'flaky',
        topics: ['t.v1'],
        handler: async (m) => {
          attempts.push(m.value);
          if (attempts.length === 1) throw new Error('transient');
        },
      });
      await expect(bus.publish([message('a')])).rejects.toThrow(MessageNotHandledError);
      await waitFor(() => expect(attempts).toEqual(['a', 'a']));
    });

    it('does not append again a message its group still has (same event id): the new publish waits for it', async () => {
      const attempts: string[] = [];
      let failuresLeft = 2;
      await bus.subscribe({
        groupId: 'flaky',
        topics: ['t.v1'],
        handler: async (m) => {
          attempts.push(m.value);
          if (m.value === 'a' && failuresLeft-- > 0) throw new Error('transient');
        },
      });
      await expect(bus.publish([message('a', 'event-a')])).rejects.toThrow(MessageNotHandledError);
      // Published again (as a relay retries) while the group still retries the first copy: no second copy.
      const again = bus.publish([message('a', 'event-a')]);
      await again.catch(() => bus.publish([message('a', 'event-a')]));
      await bus.publish([message('b', 'event-b')]);
      expect(attempts.filter((value) => value === 'b')).toEqual(['b']);
      expect(attempts.filter((value) => value === 'a')).toHaveLength(3); // two failures, one success
    });

    it('appends a message again once every group has handled it (a relay that died before marking it sent)', async () => {
      const handled: string[] = [];
      await bus.subscribe({ groupId: 'g', topics: ['t.v1'], handler: async (m) => void handled.push(m.value) });
      await bus.publish([message('a', 'event-a')]);
      await bus.publish([message('a', 'event-a')]);
      expect(handled).toEqual(['a', 'a']);
    });

    it('rejects when the group loses its last member before handling the message', async () => {
      const entered = gate();
      const release = gate();
      const subscription = await bus.subscribe({
        groupId: 'leaving',
        topics: ['t.v1'],
        handler: async () => {
          entered.open();
          await release.opened;
          throw new Error('the process is going away');
        },
      });
      const publish = bus.publish([message('a')]);
      await entered.opened;
      const closing = subscription.close();
      await expect(publish).rejects.toThrow(MessageNotHandledError);
      release.open();
      await closing;
    });

    it('waits for no group without a member, which gets the message when it returns', async () => {
      const before: string[] = [];
      const first = await bus.subscribe({ groupId: 'returning', topics: ['t.v1'], handler: async (m) => void before.push(m.value) });
      await bus.publish([message('a')]);
      await first.close();
      await bus.publish([message('b')]);
      await bus.publish([{ ...message('x'), topic: 'nobody-reads.v1' }]);
      const after: string[] = [];
      await bus.subscribe({ groupId: 'returning', topics: ['t.v1'], handler: async (m) => void after.push(m.value) });
      await waitFor(() => expect(after).toEqual(['b']));
      expect(before).toEqual(['a']);
    });
  });
});
