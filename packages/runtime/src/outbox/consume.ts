import type { EventBus, ReceivedMessage, Subscription } from '../bus/port';
import type { Database, Transaction } from '../db/port';
import { assertSchemaName } from '../db/schema-name';
import type { Logger } from '../logging/logger';
import { eventsConsumed } from '../telemetry/metrics';
import { extractTraceContext, SpanKind, withSpan } from '../telemetry/tracing';
import { parseDomainEvent, type DomainEvent } from './envelope';

export interface ConsumeEventsOptions {
  bus: EventBus;
  db: Database;
  /** The consuming service's schema, which holds its `processed_events`. */
  schema: string;
  /** Consumer name: the bus consumer group and the dedupe namespace. */
  consumer: string;
  topics: string[];
  logger: Logger;
  /** Start from the earliest retained event when the group has no position yet (default true). */
  fromBeginning?: boolean;
  /** Runs once per event id, inside the transaction that records the event as processed. */
  handler(event: DomainEvent<unknown>, tx: Transaction, message: ReceivedMessage): Promise<void>;
}

/**
 * Subscribes an idempotent consumer. For each message, in ONE transaction: mark the event id processed for
 * this consumer (`ON CONFLICT DO NOTHING`) and, only if it was not already, run the handler — so the handler's
 * writes and the mark commit together, and a redelivered event is skipped. A handler that throws rolls both
 * back and the bus delivers the event again. Malformed messages are logged (never their payload) and skipped.
 */
export function consumeEvents(options: ConsumeEventsOptions): Promise<Subscription> {
  const schema = assertSchemaName(options.schema);
  const { consumer, logger, db } = options;

  async function handle(message: ReceivedMessage): Promise<void> {
    const event = parseDomainEvent(message.value);
    if (!event) {
      eventsConsumed.inc({ consumer, topic: message.topic, result: 'failed' });
      logger.warn(
        { consumer, topic: message.topic, partition: message.partition, offset: message.offset },
        'malformed event skipped',
      );
      return;
    }
    await withSpan(
      `${message.topic} process`,
      {
        kind: SpanKind.CONSUMER,
        parent: extractTraceContext(message.headers),
        attributes: {
          'messaging.system': options.bus.kind,
          'messaging.operation': 'process',
          'messaging.destination.name': message.topic,
          'messaging.consumer.group.name': consumer,
          'messaging.message.id': event.id,
        },
      },
      async () => {
        try {
          const processed = await db.transaction(async (tx) => {
            const marked = await tx.query(
              `INSERT INTO ${schema}.processed_events (consumer, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
              [consumer, event.id],
            );
            if (marked.rowCount === 0) return false;
            await options.handler(event, tx, message);
            return true;
          });
          eventsConsumed.inc({ consumer, topic: message.topic, result: processed ? 'processed' : 'duplicate' });
        } catch (error) {
          eventsConsumed.inc({ consumer, topic: message.topic, result: 'failed' });
          throw error;
        }
      },
    );
  }

  return options.bus.subscribe({
    groupId: consumer,
    topics: options.topics,
    fromBeginning: options.fromBeginning ?? true,
    handler: handle,
  });
}
