import type { ReceivedMessage } from '../bus/port';
import type { Database, Queryable, Transaction } from '../db/port';
import { assertSchemaName } from '../db/schema-name';
import type { ConsumeEventsOptions } from './consume';
import { parseDomainEvent, type DomainEvent } from './envelope';
import { errorClassOf, errorMessageOf } from './handler-failure';
import { markProcessed } from './processed-marks';

/** A parked event as an operator lists it: where it came from and why it was set aside, never its payload. */
export interface ParkedEvent {
  consumer: string;
  eventId: string;
  /** The envelope's `type` (`team.member_add`). */
  type: string | undefined;
  topic: string;
  partition: number;
  offset: string;
  attempts: number;
  errorClass: string;
  /** The handler's error message, cut short; it may quote the payload, so it is shown to operators, never logged. */
  errorMessage: string;
  parkedAt: Date;
}

/** What replaying one parked event came to. */
export type ReplayOutcome =
  | { result: 'replayed' }
  /** No such parked event (replayed or discarded meanwhile). */
  | { result: 'gone' }
  /** The handler failed again: the event stays parked, with this error. */
  | { result: 'failed'; errorClass: string; errorMessage: string };

/**
 * Sets an event aside, in the caller's transaction: its processed mark (so a redelivery skips it) and its parked row.
 * False, with nothing written, when the event was processed meanwhile (by another member of the group).
 */
export async function parkEvent(
  tx: Transaction,
  schema: string,
  parked: { consumer: string; event: DomainEvent<unknown>; message: ReceivedMessage; error: unknown; attempts: number },
): Promise<boolean> {
  const { consumer, event, message, error, attempts } = parked;
  if (!(await markProcessed(tx, schema, consumer, event.id))) return false;
  await tx.query(
    `INSERT INTO ${schema}.parked_events
       (consumer, event_id, topic, partition, message_offset, message_key, headers, envelope, error_class, error_message, attempts)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11)`,
    [
      consumer,
      event.id,
      message.topic,
      message.partition,
      message.offset,
      message.key ?? null,
      JSON.stringify(message.headers),
      message.value,
      errorClassOf(error),
      errorMessageOf(error),
      attempts,
    ],
  );
  return true;
}

/** The parked events of `schema`, of one consumer or all, oldest first. */
export async function listParkedEvents(db: Queryable, schema: string, consumer?: string): Promise<ParkedEvent[]> {
  const safe = assertSchemaName(schema);
  const { rows } = await db.query<{
    consumer: string;
    event_id: string;
    envelope: string;
    topic: string;
    partition: number;
    message_offset: string;
    attempts: number;
    error_class: string;
    error_message: string;
    parked_at: Date;
  }>(
    `SELECT consumer, event_id, envelope, topic, partition, message_offset::text AS message_offset, attempts, error_class, error_message, parked_at
       FROM ${safe}.parked_events WHERE $1::text IS NULL OR consumer = $1 ORDER BY parked_at, event_id`,
    [consumer ?? null],
  );
  return rows.map((row) => ({
    consumer: row.consumer,
    eventId: row.event_id,
    type: parseDomainEvent(row.envelope)?.type,
    topic: row.topic,
    partition: row.partition,
    offset: row.message_offset,
    attempts: row.attempts,
    errorClass: row.error_class,
    errorMessage: row.error_message,
    parkedAt: row.parked_at,
  }));
}

/**
 * Drops a parked event for good: its processed mark stays, so it is never handled. False when there was none.
 */
export async function discardParkedEvent(db: Queryable, schema: string, consumer: string, eventId: string): Promise<boolean> {
  const safe = assertSchemaName(schema);
  const { rowCount } = await db.query(`DELETE FROM ${safe}.parked_events WHERE consumer = $1 AND event_id = $2`, [consumer, eventId]);
  return rowCount > 0;
}

/**
 * Runs the consumer's handler again for one parked event, in ONE transaction that also deletes the parked row: the
 * row's deletion locks it, so two replays never both run the handler, and a handler that fails rolls the deletion
 * back. The processed mark was written when the event was parked and stays, so the bus never hands it over again.
 * A failure is recorded on the row (attempts, error) and returned; the event stays parked.
 */
export async function replayParkedEvent(options: {
  db: Database;
  schema: string;
  consumer: string;
  eventId: string;
  /** The consumer's handler for one event (`singleEventHandler` of its consumeEvents options). */
  handler: ConsumeEventsOptions['handler'];
}): Promise<ReplayOutcome> {
  const { db, consumer, eventId } = options;
  const schema = assertSchemaName(options.schema);
  try {
    const found = await db.transaction(async (tx) => {
      const { rows } = await tx.query<{ topic: string; partition: number; message_offset: string; message_key: string | null; headers: Record<string, string>; envelope: string }>(
        `DELETE FROM ${schema}.parked_events WHERE consumer = $1 AND event_id = $2
         RETURNING topic, partition, message_offset::text AS message_offset, message_key, headers, envelope`,
        [consumer, eventId],
      );
      const row = rows[0];
      if (!row) return false;
      const event = parseDomainEvent(row.envelope);
      // Only well-formed events are parked (malformed messages are skipped before any handler runs).
      if (!event) throw new Error(`parked event ${eventId} of ${consumer} holds no event envelope`);
      const message: ReceivedMessage = {
        topic: row.topic,
        key: row.message_key,
        value: row.envelope,
        headers: row.headers,
        partition: row.partition,
        offset: row.message_offset,
      };
      await options.handler(event, tx, message);
      return true;
    });
    return found ? { result: 'replayed' } : { result: 'gone' };
  } catch (error) {
    const failure = { errorClass: errorClassOf(error), errorMessage: errorMessageOf(error) };
    await db.query(
      `UPDATE ${schema}.parked_events SET attempts = attempts + 1, error_class = $3, error_message = $4 WHERE consumer = $1 AND event_id = $2`,
      [consumer, eventId, failure.errorClass, failure.errorMessage],
    );
    return { result: 'failed', ...failure };
  }
}
