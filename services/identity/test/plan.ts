import type { Client } from 'pg';
import type { Queryable } from '@platform/runtime';

/**
 * The plans of the statements `run` sends, explained instead of run. Sequential scans are discouraged, so the answer
 * says whether an index can serve them, whatever the size of the test's tables.
 */
export async function planOf(db: Client, run: (explaining: Queryable) => Promise<unknown>): Promise<string> {
  const lines: string[] = [];
  const explaining: Queryable = {
    query: async <Row>(sql: string, params: readonly unknown[] = []) => {
      const { rows } = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, [...params]);
      lines.push(...rows.map((row) => row['QUERY PLAN']));
      return { rows: [] as Row[], rowCount: 0 };
    },
  };
  await db.query('BEGIN');
  try {
    await db.query('SET LOCAL enable_seqscan = off');
    await run(explaining);
    return lines.join('\n');
  } finally {
    await db.query('ROLLBACK');
  }
}
