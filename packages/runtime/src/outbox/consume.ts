import type { EventBus, ReceivedMessage, Subscription } from '../bus/port';
import type { Database, Transaction } from '../db/port';
import { assertSchemaName } from '../db/schema-name';
import type { Logger } from '../logging/logger';
import { eventsConsumed } from '../telemetry/metrics';
import { extractTraceContext, linksFromTraceHeaders, SpanKind, withSpan } from '../telemetry/tracing';
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
  /**
   * For consumers of many small events (call records): up to `maxBatch` events per transaction. The handler gets
   * only the events not processed before, inside the transaction that records them all as processed.
   */
  batch?: { maxBatch: number; gatherMs?: number; handler(events: DomainEvent<unknown>[], tx: Transaction): Promise<void> };
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
              { prepared: `processed_events_mark_${schema}` },
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

  /** The batch form: one span and one transaction for the batch, the processed marks written in one statement. */
  async function handleBatch(messages: ReceivedMessage[], batch: NonNullable<ConsumeEventsOptions['batch']>): Promise<void> {
    const events: DomainEvent<unknown>[] = [];
    for (const message of messages) {
      const event = parseDomainEvent(message.value);
      if (event) events.push(event);
      else {
        eventsConsumed.inc({ consumer, topic: message.topic, result: 'failed' });
        logger.warn({ consumer, topic: message.topic, partition: message.partition, offset: message.offset }, 'malformed event skipped');
      }
    }
    if (events.length === 0) return;
    const topic = messages[0]!.topic;
    await withSpan(
      `${topic} process`,
      {
        kind: SpanKind.CONSUMER,
        // It continues the first message's trace, as before, and links to every message's writer (OTel messaging
        // conventions for a batch), so each request whose event it processed leads to it.
        parent: extractTraceContext(messages[0]!.headers),
        links: linksFromTraceHeaders(messages.map((message) => message.headers)),
        attributes: {
          'messaging.system': options.bus.kind,
          'messaging.operation': 'process',
          'messaging.destination.name': topic,
          'messaging.consumer.group.name': consumer,
          'messaging.batch.message_count': events.length,
        },
      },
      async () => {
        try {
          const fresh = await db.transaction(async (tx) => {
            const marked = await tx.query<{ event_id: string }>(
              `INSERT INTO ${schema}.processed_events (consumer, event_id) SELECT $1, unnest($2::uuid[])
               ON CONFLICT DO NOTHING RETURNING event_id`,
              [consumer, events.map((event) => event.id)],
              { prepared: `processed_events_mark_batch_${schema}` },
            );
            const newIds = new Set(marked.rows.map((row) => row.event_id));
            const unseen = events.filter((event) => newIds.delete(event.id));
            if (unseen.length > 0) await batch.handler(unseen, tx);
            return unseen.length;
          });
          eventsConsumed.inc({ consumer, topic, result: 'processed' }, fresh);
          eventsConsumed.inc({ consumer, topic, result: 'duplicate' }, events.length - fresh);
        } catch (error) {
          eventsConsumed.inc({ consumer, topic, result: 'failed' }, events.length);
          throw error;
        }
      },
    );
  }

  const batch = options.batch;
  return options.bus.subscribe({
    groupId: consumer,
    topics: options.topics,
    fromBeginning: options.fromBeginning ?? true,
    handler: handle,
    ...(batch ? { batch: { ...batch, handler: (messages: ReceivedMessage[]) => handleBatch(messages, batch) } } : {}),
  });
}
