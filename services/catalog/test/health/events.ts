import { createEventBus, parseDomainEvent, TOPICS, type DomainEvent } from '@platform/runtime';
import { unique, type TestPlatform } from '@platform/test';

export interface CatalogEvents {
  /** Every `catalog.v1` event received so far, in delivery order. */
  events: DomainEvent<Record<string, unknown>>[];
  /** The received events of one server (events are keyed by server, so they arrive in order). */
  of(serverId: string): DomainEvent<Record<string, unknown>>[];
  close(): Promise<void>;
}

/** A consumer group of its own on the platform's real bus (Kafka under test.env), reading `catalog.v1` from the start. */
export async function consumeCatalogEvents(platform: TestPlatform): Promise<CatalogEvents> {
  const { config, logger } = platform.platform.context;
  const bus = createEventBus(config.bus, logger);
  const events: DomainEvent<Record<string, unknown>>[] = [];
  const subscription = await bus.subscribe({
    groupId: unique('test-catalog-events'),
    topics: [TOPICS.catalog],
    fromBeginning: true,
    async handler(message) {
      const event = parseDomainEvent(message.value);
      if (event) events.push(event as DomainEvent<Record<string, unknown>>);
    },
  });
  return {
    events,
    of: (serverId) => events.filter((event) => event.data.serverId === serverId),
    async close() {
      await subscription.close();
      await bus.close();
    },
  };
}
