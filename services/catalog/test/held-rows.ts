import type { Client } from 'pg';
import { eventually } from '@platform/test';

/**
 * Races made on purpose: a transaction of the test holds rows that requests need, the test fires the requests and
 * lets the rows go once the database shows them waiting, so they overlap where they would otherwise only by chance.
 */

/** Begins a transaction on `holder` that locks what `lockingSql` selects (one row at least); answers its session's pid. */
export async function holdRows(holder: Client, lockingSql: string, params: unknown[]): Promise<number> {
  await holder.query('BEGIN');
  const { rowCount } = await holder.query(lockingSql, params);
  if (!rowCount) throw new Error(`nothing to hold: ${lockingSql}`);
  return (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
}

/**
 * The sessions waiting for a lock that session `pid` holds, directly or behind another waiter (a second request for
 * the same row waits for the first). `observer` must not be in a transaction: pg_stat_activity is read once per
 * transaction.
 */
export async function sessionsWaitingBehind(observer: Client, pid: number): Promise<number[]> {
  const { rows } = await observer.query<{ pid: number }>(
    `WITH RECURSIVE behind (pid) AS (
       SELECT pid FROM pg_stat_activity WHERE $1::int = ANY (pg_blocking_pids(pid))
       UNION
       SELECT a.pid FROM pg_stat_activity a JOIN behind b ON b.pid = ANY (pg_blocking_pids(a.pid))
     ) SELECT pid FROM behind`,
    [pid],
  );
  return rows.map((row) => row.pid);
}

/** Waits until `count` sessions wait behind `pid` (sessionsWaitingBehind); answers them. */
export function untilWaitingBehind(observer: Client, pid: number, count: number, what: string): Promise<number[]> {
  return eventually(
    () => sessionsWaitingBehind(observer, pid),
    (pids) => pids.length >= count,
    30_000,
  ).catch((error: unknown) => {
    throw new Error(`${what}: ${(error as Error).message}`);
  });
}
