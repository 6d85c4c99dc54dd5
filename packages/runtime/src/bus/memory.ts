import type { Logger } from '../logging/logger';
import { BusClosedError } from './errors';
import { sharedMemoryBroker, type MemoryBroker, type RetryBackoff } from './memory-broker';
import type { BusMessage, EventBus, SubscribeOptions, Subscription } from './port';

export interface MemoryBusOptions {
  topicPrefix: string;
  logger: Logger;
  /** Back-off before a rejected message is delivered again (default 50 ms doubling to 2 s). */
  retryBackoff?: RetryBackoff;
  /** The broker to attach to; defaults to the one shared by the whole process. */
  broker?: MemoryBroker;
}

/**
 * The in-process bus for `--target=all` and tests. It follows Kafka's contract: every group gets every message,
 * one member of a group handles each, order is kept per topic (hence per key), handlers that reject see the
 * message again. Nothing it holds survives the process, so where Kafka's publish resolves once the message is
 * stored, this one resolves once every consumer group with a member on the topic has handled it, and rejects
 * when one of them fails it (see `MemoryBroker`): the outbox relay marks a row sent only then, and a crash leaves
 * it unsent, to be published again on restart.
 */
export function createMemoryBus(options: MemoryBusOptions): EventBus {
  const broker = options.broker ?? sharedMemoryBroker;
  const retry = options.retryBackoff ?? { initialMs: 50, maxMs: 2_000 };
  const subscriptions = new Set<() => Promise<void>>();
  let closed = false;
  const full = (name: string) => `${options.topicPrefix}${name}`;

  return {
    kind: 'memory',

    async publish(messages: BusMessage[]) {
      if (closed) throw new BusClosedError();
      await broker.append(messages.map((m) => ({ ...m, topic: full(m.topic), logicalTopic: m.topic })));
    },

    async subscribe(subscription: SubscribeOptions): Promise<Subscription> {
      if (closed) throw new BusClosedError();
      // The broker keys logs by full topic name; the handler sees the logical name, as with Kafka.
      const byFullName = new Map(subscription.topics.map((topic) => [full(topic), topic]));
      const leave = broker.join(
        full(subscription.groupId),
        {
          topics: new Set(byFullName.keys()),
          handle: (messages) => (subscription.batch ? subscription.batch.handler(messages) : subscription.handler(messages[0]!)),
          maxBatch: subscription.batch?.maxBatch ?? 1,
          closed: false,
          inFlight: null,
          logger: options.logger,
          names: { group: subscription.groupId, topics: byFullName },
        },
        subscription.fromBeginning ?? true,
        retry,
      );
      let left: Promise<void> | undefined;
      const close = () => {
        left ??= leave().finally(() => subscriptions.delete(close));
        return left;
      };
      subscriptions.add(close);
      return { close };
    },

    async ping() {
      if (closed) throw new BusClosedError();
    },

    async close() {
      closed = true;
      await Promise.all([...subscriptions].map((close) => close()));
    },
  };
}
