import { randomUUID } from 'node:crypto';
import { createMemoryBus, MemoryBroker, MessageNotHandledError, type BusMessage, type EventBus, type ReceivedMessage } from '../../src/bus';
import { busContract, silentLogger } from './bus-contract';
import { waitFor } from './wait-for';

const prefix = () => `t-${randomUUID().slice(0, 8)}.`;

/** A promise the test resolves when it chooses. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

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

  describe('holds only what some group has yet to handle', () => {
    let broker: MemoryBroker;
    let bus: EventBus;
    beforeEach(() => {
      broker = new MemoryBroker();
      bus = createMemoryBus({ topicPrefix: '', logger: silentLogger, broker });
    });
    afterEach(() => bus.close());

    const publish = (values: string[]) => bus.publish(values.map((value) => ({ topic: 't.v1', key: 'k', value, headers: {} })));

    it('forgets messages once every group has handled them', async () => {
      const a: ReceivedMessage[] = [];
      const b: ReceivedMessage[] = [];
      await bus.subscribe({ groupId: 'a', topics: ['t.v1'], handler: async (m) => void a.push(m) });
      await bus.subscribe({ groupId: 'b', topics: ['t.v1'], handler: async (m) => void b.push(m) });
      for (let round = 0; round < 5; round += 1) await publish(['1', '2', '3', '4']);
      expect(a).toHaveLength(20);
      expect(b).toHaveLength(20);
      expect(broker.retained('t.v1')).toBe(0);
      // Offsets keep counting past what was dropped.
      expect(a.map((m) => Number(m.offset))).toEqual(Array.from({ length: 20 }, (_, i) => i));
    });

    it('keeps what a group without a member has yet to read, until it has read it', async () => {
      const live: string[] = [];
      await bus.subscribe({ groupId: 'live', topics: ['t.v1'], handler: async (m) => void live.push(m.value) });
      const away = await bus.subscribe({ groupId: 'away', topics: ['t.v1'], handler: async () => undefined });
      await publish(['1', '2']);
      expect(broker.retained('t.v1')).toBe(0);
      await away.close();
      await publish(['3', '4', '5']);
      expect(live).toEqual(['1', '2', '3', '4', '5']);
      expect(broker.retained('t.v1')).toBe(3);
      const back: string[] = [];
      await bus.subscribe({ groupId: 'away', topics: ['t.v1'], handler: async (m) => void back.push(m.value) });
      await waitFor(() => expect(back).toEqual(['3', '4', '5']));
      await waitFor(() => expect(broker.retained('t.v1')).toBe(0));
    });

    it('starts a new group from the beginning at the earliest message still held', async () => {
      const first: string[] = [];
      const lagging = gate();
      await bus.subscribe({
        groupId: 'first',
        topics: ['t.v1'],
        handler: async (m) => {
          if (m.value === '3') await lagging.opened;
          first.push(m.value);
        },
      });
      await publish(['1', '2']);
      const pending = publish(['3', '4']);
      const newcomer: ReceivedMessage[] = [];
      await bus.subscribe({ groupId: 'newcomer', topics: ['t.v1'], fromBeginning: true, handler: async (m) => void newcomer.push(m) });
      lagging.open();
      await pending;
      await waitFor(() => expect(newcomer.map((m) => [m.value, m.offset])).toEqual([['3', '2'], ['4', '3']]));
      await waitFor(() => expect(broker.retained('t.v1')).toBe(0));
      expect(first).toEqual(['1', '2', '3', '4']);
    });

    describe('a topic no group reads', () => {
      let small: MemoryBroker;
      let smallBus: EventBus;
      beforeEach(() => {
        small = new MemoryBroker(3);
        smallBus = createMemoryBus({ topicPrefix: '', logger: silentLogger, broker: small });
      });
      afterEach(() => smallBus.close());

      const publishTo = (topic: string, values: string[]) => smallBus.publish(values.map((value) => ({ topic, key: 'k', value, headers: {} })));

      it('keeps only its newest messages, however many are published, for a group that joins later', async () => {
        for (let round = 0; round < 100; round += 1) await publishTo('unread.v1', ['a', 'b', 'c', 'd', 'e']);
        expect(small.retained('unread.v1')).toBe(3);
        const late: ReceivedMessage[] = [];
        await smallBus.subscribe({ groupId: 'late', topics: ['unread.v1'], fromBeginning: true, handler: async (m) => void late.push(m) });
        await waitFor(() => expect(late.map((m) => [m.value, m.offset])).toEqual([['c', '497'], ['d', '498'], ['e', '499']]));
      });

      it('is not cut once a group reads it, even one without a member: that group gets all it missed', async () => {
        const away = await smallBus.subscribe({ groupId: 'away', topics: ['read.v1'], handler: async () => undefined });
        await away.close();
        await publishTo('read.v1', ['1', '2', '3', '4', '5']);
        expect(small.retained('read.v1')).toBe(5);
        const back: string[] = [];
        await smallBus.subscribe({ groupId: 'away', topics: ['read.v1'], handler: async (m) => void back.push(m.value) });
        await waitFor(() => expect(back).toEqual(['1', '2', '3', '4', '5']));
      });
    });
  });
});
