import type { Queryable } from '@platform/runtime';

/**
 * Claims up to `limit` enabled servers whose `dueColumn` time has come, moving it one interval forward in the same
 * statement. SKIP LOCKED: replicas running the same round never claim the same server.
 */
export async function claimDue<Row extends object>(
  db: Queryable,
  dueColumn: 'next_health_check_at' | 'next_refresh_at',
  limit: number,
  intervalSeconds: number,
  returning: string,
): Promise<Row[]> {
  const { rows } = await db.query<Row>(
    `WITH due AS (
       SELECT id FROM catalog.mcp_servers
        WHERE enabled AND ${dueColumn} <= now()
        ORDER BY ${dueColumn}
        LIMIT $1
        FOR UPDATE SKIP LOCKED
     )
     UPDATE catalog.mcp_servers SET ${dueColumn} = now() + make_interval(secs => $2)
      WHERE id IN (SELECT id FROM due)
      RETURNING ${returning}`,
    [limit, intervalSeconds],
  );
  return rows;
}
