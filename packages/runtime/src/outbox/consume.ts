import type { EventBus, ReceivedMessage, Subscription } from '../bus/port';
import type { Database, Transaction } from '../db/port';
import { assertSchemaName } from '../db/schema-name';
import { isTransientFailure } from '../errors/transient';
import type { Logger } from '../logging/logger';
import { eventsConsumed, eventsParked } from '../telemetry/metrics';
import { extractTraceContext, linksFromTraceHeaders, SpanKind, withSpan } from '../telemetry/tracing';
import { parseDomainEvent, type DomainEvent } from './envelope';
import { errorClassOf, EventHandlerFailedError } from './handler-failure';
import { parkEvent } from './parked-events';
import { markProcessed } from './processed-marks';

/**
 * How many times in a row an event's handler may fail, for a reason other than a dependency down, before the event is
 * parked. With Kafka's back-off (100 ms doubling to 5 s) the eighth failure comes about 11 s after the first (about 5 s
 * with the in-process bus's): long enough for a race or a hiccup that is not classified as transient to clear.
 */
export const PARK_AFTER_ATTEMPTS = 8;

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
  /** Failures in a row, other than transient ones, after which an event is parked (default PARK_AFTER_ATTEMPTS). */
  parkAfterAttempts?: number;
}

/**
 * The consumer's handler for one event: `handler`, or for a batch consumer its batch handler with that one event
 * (what a failed batch falls back to, and what replaying a parked event runs).
 */
export function singleEventHandler(options: Pick<ConsumeEventsOptions, 'handler' | 'batch'>): ConsumeEventsOptions['handler'] {
  const batch = options.batch;
  return batch ? (event, tx) => batch.handler([event], tx) : (event, tx, message) => options.handler(event, tx, message);
}

/**
 * Subscribes an idempotent consumer. For each message, in ONE transaction: mark the event id processed for
 * this consumer (`ON CONFLICT DO NOTHING`) and, only if it was not already, run the handler — so the handler's
 * writes and the mark commit together, and a redelivered event is skipped. A handler that throws rolls both
 * back and the bus delivers the event again. Malformed messages are logged (never their payload) and skipped.
 *
 * A failure that says a dependency is down (isTransientFailure) is retried in place for ever. Any other one counts:
 * after `parkAfterAttempts` in a row for the same event, the event is parked, in ONE transaction with its processed
 * mark (parked-events.ts), so the consumer goes on with the events behind it and an operator replays it later. What
 * the bus logs of such a failure names the error's class, never its message (EventHandlerFailedError).
 */
export function consumeEvents(options: ConsumeEventsOptions): Promise<Subscription> {
  const schema = assertSchemaName(options.schema);
  const { consumer, logger, db } = options;
  const parkAfter = options.parkAfterAttempts ?? PARK_AFTER_ATTEMPTS;
  const handleOne = singleEventHandler(options);
  /** Per topic and partition: the event failing at its head and how many times in a row (transient failures reset it). */
  const failing = new Map<string, { eventId: string; attempts: number }>();
  const headOf = (message: ReceivedMessage) => `${message.topic}\u0000${message.partition}`;
  // Each series exists from the start at 0: Prometheus's increase() does not count a series' first appearance, so a
  // counter first set at 1 by the first parked event would never fire the alert on it (docs/operations.md).
  for (const topic of options.topics) eventsParked.inc({ consumer, topic }, 0);

  function warnMalformed(message: ReceivedMessage): void {
    eventsConsumed.inc({ consumer, topic: message.topic, result: 'failed' });
    logger.warn({ consumer, topic: message.topic, partition: message.partition, offset: message.offset }, 'malformed event skipped');
  }

  /**
   * One event in its own transaction with its processed mark. Resolves when it was handled, was a duplicate, or has
   * just been parked; rejects for the bus to deliver it again.
   */
  async function processEvent(event: DomainEvent<unknown>, message: ReceivedMessage): Promise<void> {
    let processed: boolean;
    try {
      processed = await db.transaction(async (tx) => {
        if (!(await markProcessed(tx, schema, consumer, event.id))) return false;
        await handleOne(event, tx, message);
        return true;
      });
    } catch (error) {
      eventsConsumed.inc({ consumer, topic: message.topic, result: 'failed' });
      return failed(event, message, error);
    }
    // Only its own success ends an event's streak: in a failed batch taken event by event, the events before it pass.
    if (failing.get(headOf(message))?.eventId === event.id) failing.delete(headOf(message));
    eventsConsumed.inc({ consumer, topic: message.topic, result: processed ? 'processed' : 'duplicate' });
  }

  /** A handler's failure: thrown again as it is when transient, else counted, and the event parked at `parkAfter`. */
  async function failed(event: DomainEvent<unknown>, message: ReceivedMessage, error: unknown): Promise<void> {
    const head = headOf(message);
    if (isTransientFailure(error)) {
      failing.delete(head);
      throw error;
    }
    const before = failing.get(head);
    const attempts = before?.eventId === event.id ? before.attempts + 1 : 1;
    failing.set(head, { eventId: event.id, attempts });
    if (attempts < parkAfter) throw new EventHandlerFailedError(event.id, error, attempts, parkAfter);
    const parked = await db.transaction((tx) => parkEvent(tx, schema, { consumer, event, message, error, attempts }));
    failing.delete(head);
    if (!parked) return; // processed meanwhile by another member of the group: nothing to set aside
    eventsParked.inc({ consumer, topic: message.topic });
    logger.error(
      {
        consumer,
        topic: message.topic,
        partition: message.partition,
        offset: message.offset,
        eventId: event.id,
        errorClass: errorClassOf(error),
        attempts,
      },
      'event parked: its handler kept failing; the consumer goes on without it (docs/operations.md, Parked events)',
    );
  }

  async function handle(message: ReceivedMessage): Promise<void> {
    const event = parseDomainEvent(message.value);
    if (!event) return warnMalformed(message);
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
      () => processEvent(event, message),
    );
  }

  /**
   * The batch form: one span and one transaction for the batch, the processed marks written in one statement. A batch
   * that fails for a reason other than a dependency down is taken again event by event (each in its own transaction,
   * through the batch handler with that one event), so the others are stored and only the one at fault is counted
   * towards parking; the first that fails stops the rest, which come again with it, in order.
   */
  async function handleBatch(messages: ReceivedMessage[], batch: NonNullable<ConsumeEventsOptions['batch']>): Promise<void> {
    const received: Array<{ event: DomainEvent<unknown>; message: ReceivedMessage }> = [];
    for (const message of messages) {
      const event = parseDomainEvent(message.value);
      if (event) received.push({ event, message });
      else warnMalformed(message);
    }
    if (received.length === 0) return;
    const events = received.map(({ event }) => event);
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
          failing.delete(headOf(messages[0]!));
          eventsConsumed.inc({ consumer, topic, result: 'processed' }, fresh);
          eventsConsumed.inc({ consumer, topic, result: 'duplicate' }, events.length - fresh);
          return;
        } catch (error) {
          eventsConsumed.inc({ consumer, topic, result: 'failed' }, events.length);
          if (isTransientFailure(error)) {
            failing.delete(headOf(messages[0]!));
            throw error;
          }
          const first = messages[0]!;
          logger.warn(
            { consumer, topic, partition: first.partition, offset: first.offset, events: events.length, errorClass: errorClassOf(error) },
            'event batch failed; handling its events one by one',
          );
        }
        for (const { event, message } of received) await processEvent(event, message);
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
