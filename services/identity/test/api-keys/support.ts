import type { Client } from 'pg';

/** Whether `text` occurs anywhere in the identity tables that could leak a key: keys, the outbox, the audit log. */
export async function keyTablesContain(db: Client, text: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT (SELECT count(*) FROM identity.api_keys k WHERE k::text LIKE '%' || $1 || '%')
          + (SELECT count(*) FROM identity.outbox o WHERE o::text LIKE '%' || $1 || '%')
          + (SELECT count(*) FROM identity.audit_entries a WHERE a::text LIKE '%' || $1 || '%') AS hits`,
    [text],
  );
  return Number(rows[0].hits) > 0;
}

/** The audit events (from the outbox) of one action about one target. */
export async function auditEventsOf(db: Client, action: string, targetId: string): Promise<Record<string, any>[]> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const { rows } = await db.query(`SELECT payload FROM identity.outbox WHERE payload::text LIKE '%' || $1 || '%' ORDER BY id`, [targetId]);
  return rows
    .map((row) => row.payload)
    .filter((payload) => payload.type === action);
}
