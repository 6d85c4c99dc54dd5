import type { Queryable } from '@platform/runtime';
import { claimDue } from './claim-due';

/**
 * Schedules servers the refresh scheduler has not seen yet one interval from now, then claims up to `limit` enabled
 * servers whose re-discovery is due, moving their next time one interval forward in the claiming statement (SKIP
 * LOCKED: replicas never claim the same server in one round).
 */
export async function claimDueRefreshes(db: Queryable, limit: number, intervalSeconds: number): Promise<{ id: string; team_id: string }[]> {
  await db.query(
    `UPDATE catalog.mcp_servers SET next_refresh_at = now() + make_interval(secs => $1) WHERE next_refresh_at IS NULL AND enabled`,
    [intervalSeconds],
  );
  return claimDue<{ id: string; team_id: string }>(db, 'next_refresh_at', limit, intervalSeconds, 'id, team_id');
}

/**
 * Takes the server's refresh lease when nobody holds it (or the holder's lease ran out). When another refresh holds
 * it, asks that holder to discover once more instead (`refresh_again`) and answers false. One statement, so two
 * callers cannot both take it.
 */
export async function takeRefreshLease(db: Queryable, serverId: string, leaseSeconds: number): Promise<boolean> {
  const { rows } = await db.query<{ taken: boolean }>(
    `UPDATE catalog.mcp_servers
        SET refresh_again = NOT (refresh_lease_until IS NULL OR refresh_lease_until < now()),
            refresh_lease_until = CASE WHEN refresh_lease_until IS NULL OR refresh_lease_until < now()
                                       THEN now() + make_interval(secs => $2) ELSE refresh_lease_until END
      WHERE id = $1
      RETURNING NOT refresh_again AS taken`,
    [serverId, leaseSeconds],
  );
  return rows[0]?.taken ?? false;
}

/**
 * Ends a discovery round of the lease holder: when another refresh was asked for meanwhile, or the holder itself
 * must discover again (`mustRepeat`: the round was discarded), and `mayRepeat`, keeps the lease (renewed) and
 * answers true (discover again); otherwise releases it and answers false.
 */
export async function finishRefreshRound(db: Queryable, serverId: string, leaseSeconds: number, mayRepeat: boolean, mustRepeat = false): Promise<boolean> {
  const { rows } = await db.query<{ again: boolean }>(
    `UPDATE catalog.mcp_servers
        SET refresh_lease_until = CASE WHEN (refresh_again OR $4) AND $3 THEN now() + make_interval(secs => $2) END,
            refresh_again = false
      WHERE id = $1
      RETURNING refresh_lease_until IS NOT NULL AS again`,
    [serverId, leaseSeconds, mayRepeat, mustRepeat],
  );
  return rows[0]?.again ?? false;
}

export async function releaseRefreshLease(db: Queryable, serverId: string): Promise<void> {
  await db.query(`UPDATE catalog.mcp_servers SET refresh_lease_until = NULL, refresh_again = false WHERE id = $1`, [serverId]);
}
