import { Client } from 'pg';
import { writeAuditEvent, type AuditEventData, type AuditEvent, type Transaction } from '@platform/runtime';

/**
 * Commits audit events straight into the identity outbox of a database no platform is serving at the moment,
 * exactly as a service's transaction would (same writer, same table). With no relay running, this is the
 * state a crash right after commit leaves behind: committed, not yet published.
 */
export async function commitAuditEvents(databaseUrl: string, events: AuditEventData[]): Promise<AuditEvent[]> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    const tx: Transaction = {
      query: async (sql, params) => {
        const result = await client.query(sql, params as unknown[] | undefined);
        return { rows: result.rows, rowCount: result.rowCount ?? 0 };
      },
      afterCommit: () => undefined,
    };
    const written: AuditEvent[] = [];
    for (const event of events) written.push(await writeAuditEvent(tx, 'identity', event));
    await client.query('COMMIT');
    return written;
  } finally {
    await client.end();
  }
}

/** Runs one query on the database (test assertions on what is stored). */
export async function queryDatabase<Row>(databaseUrl: string, sql: string, params: unknown[] = []): Promise<Row[]> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as Row[];
  } finally {
    await client.end();
  }
}
