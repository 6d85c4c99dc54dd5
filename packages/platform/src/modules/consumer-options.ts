import type { ConsumeEventsOptions, EventConsumer } from '@platform/runtime';

/**
 * A service's consumer as `consumeEvents` takes it (its name as the consumer, `handle` as `handler`, its batch options
 * with their `handle` as `handler`): for the service module, which subscribes it, and the `events` command, which
 * replays what it parked with the same handler.
 */
export function consumerOptions(consumer: EventConsumer): Pick<ConsumeEventsOptions, 'consumer' | 'topics' | 'handler' | 'batch'> {
  return {
    consumer: consumer.name,
    topics: consumer.topics,
    handler: consumer.handle,
    ...(consumer.batch ? { batch: batchDelivery(consumer.batch) } : {}),
  };
}

/** A consumer's batch options as `consumeEvents` takes them: the same delivery options, its `handle` as `handler`. */
function batchDelivery<B extends { handle: unknown }>({ handle, ...delivery }: B): Omit<B, 'handle'> & { handler: B['handle'] } {
  return { ...delivery, handler: handle };
}
