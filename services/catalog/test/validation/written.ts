import type { Client } from 'pg';

/** Where both outboxes end now: what a refused request must not add to. */
export interface OutboxMarks {
  catalog: string;
  identity: string;
}

export async function outboxMarks(db: Client): Promise<OutboxMarks> {
  const { rows } = await db.query<OutboxMarks>(
    'SELECT (SELECT coalesce(max(id), 0) FROM catalog.outbox)::text AS catalog, (SELECT coalesce(max(id), 0) FROM identity.outbox)::text AS identity',
  );
  return rows[0]!;
}

/**
 * What the request wrote that is read synchronously: rows of either outbox (catalog's audit entries and domain
 * events, identity's events) and identity's own audit entries (identity stores those directly), by request id.
 */
export async function writtenSince(db: Client, marks: OutboxMarks, requestId: string): Promise<string[]> {
  const { rows } = await db.query<{ row: string }>(
    `SELECT 'catalog outbox ' || topic || ' ' || (payload->>'type') AS row FROM catalog.outbox WHERE id > $1
     UNION ALL SELECT 'identity outbox ' || topic || ' ' || (payload->>'type') FROM identity.outbox WHERE id > $2
     UNION ALL SELECT 'audit entry ' || action FROM identity.audit_entries WHERE request_id = $3`,
    [marks.catalog, marks.identity, requestId],
  );
  return rows.map((r) => r.row);
}
