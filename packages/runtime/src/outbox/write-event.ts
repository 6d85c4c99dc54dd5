import { timeOrderedUuid } from '../crypto/time-ordered-id';
import type { Transaction } from '../db/port';
import { assertSchemaName } from '../db/schema-name';
import { injectTraceHeaders } from '../telemetry/tracing';
import type { DomainEvent } from './envelope';
import { nudgeRelay } from './nudge';

export interface NewEvent<T> {
  /** Logical topic (see TOPICS). */
  topic: string;
  type: string;
  /** Partitioning key: events with the same key are delivered in order (for example the aggregate id). */
  key?: string | null;
  data: T;
  source: string;
}

/** Header names the outbox sets besides the W3C trace-context ones. */
export const EVENT_HEADERS = { id: 'event-id', type: 'event-type' } as const;

/** The columns an outbox row is written with, in the order of `OutboxRow.values`. */
const OUTBOX_COLUMNS = 'event_id, topic, key, payload, headers';

/**
 * An event ready to be stored: its envelope and the values of `OUTBOX_COLUMNS` (payload and headers as JSON
 * text, to be cast to jsonb). The active trace context travels in the headers, so consumers continue this trace.
 */
interface OutboxRow<T> {
  envelope: DomainEvent<T>;
  values: [eventId: string, topic: string, key: string | null, payload: string, headers: string];
}

function outboxRow<T>(event: NewEvent<T>): OutboxRow<T> {
  const now = Date.now(); // one reading: the id's time is the event's occurredAt
  const envelope: DomainEvent<T> = {
    id: timeOrderedUuid(now),
    type: event.type,
    source: event.source,
    occurredAt: new Date(now).toISOString(),
    data: event.data,
  };
  const headers = { ...injectTraceHeaders(), [EVENT_HEADERS.id]: envelope.id, [EVENT_HEADERS.type]: envelope.type };
  return { envelope, values: [envelope.id, event.topic, event.key ?? null, JSON.stringify(envelope), JSON.stringify(headers)] };
}

/**
 * Records an event in `<schema>.outbox` inside the caller's transaction, so it is published if and only if
 * the transaction commits.
 */
export async function writeEvent<T>(tx: Transaction, schema: string, event: NewEvent<T>): Promise<DomainEvent<T>> {
  const safeSchema = assertSchemaName(schema);
  const row = outboxRow(event);
  await tx.query(`INSERT INTO ${safeSchema}.outbox (${OUTBOX_COLUMNS}) VALUES ($1, $2, $3, $4::jsonb, $5::jsonb)`, row.values, {
    prepared: `outbox_insert_${safeSchema}`,
  });
  tx.afterCommit(() => nudgeRelay(safeSchema));
  return row.envelope;
}
