import type { Queryable } from '../db/port';

/**
 * Marks an event processed by `consumer` in `schema` (a name already checked by assertSchemaName), in the caller's
 * transaction; false when it already was, and so must not be handled (or parked) again.
 */
export async function markProcessed(tx: Queryable, schema: string, consumer: string, eventId: string): Promise<boolean> {
  const marked = await tx.query(
    `INSERT INTO ${schema}.processed_events (consumer, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
    [consumer, eventId],
    { prepared: `processed_events_mark_${schema}` },
  );
  return marked.rowCount > 0;
}
