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
 * Whether nobody holds the lease: it was let go or ran out, or it is this replica's (`$2`). The caller is then the one
 * refresh of the server this replica runs (refresh-leases.ts), so a lease of its own is one a refresh that no longer
 * runs could not let go.
 */
const LEASE_FREE = '(refresh_lease_until IS NULL OR refresh_lease_until < now() OR refresh_lease_replica IS NOT DISTINCT FROM $2::uuid)';

/**
 * Takes the server's refresh lease for `token` of `replica` for `leaseSeconds` when it is free (LEASE_FREE). When
 * another refresh holds it, asks that holder to discover once more instead (`refresh_again`) and answers false. One
 * statement, so two callers cannot both take it.
 */
export async function takeRefreshLease(db: Queryable, serverId: string, replica: string, token: string, leaseSeconds: number): Promise<boolean> {
  const { rows } = await db.query<{ taken: boolean }>(
    `UPDATE catalog.mcp_servers
        SET refresh_again = NOT ${LEASE_FREE},
            refresh_lease_until = CASE WHEN ${LEASE_FREE} THEN now() + make_interval(secs => $4) ELSE refresh_lease_until END,
            refresh_lease_replica = CASE WHEN ${LEASE_FREE} THEN $2::uuid ELSE refresh_lease_replica END,
            refresh_lease_token = CASE WHEN ${LEASE_FREE} THEN $3::uuid ELSE refresh_lease_token END
      WHERE id = $1
      RETURNING NOT refresh_again AS taken`,
    [serverId, replica, token, leaseSeconds],
  );
  return rows[0]?.taken ?? false;
}

/** Extends the lease `token` holds to `leaseSeconds` from now; false when it holds it no more. */
export async function renewRefreshLease(db: Queryable, serverId: string, token: string, leaseSeconds: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE catalog.mcp_servers SET refresh_lease_until = now() + make_interval(secs => $3) WHERE id = $1 AND refresh_lease_token = $2`,
    [serverId, token, leaseSeconds],
  );
  return (rowCount ?? 0) > 0;
}

/** Whether the holder goes on: another refresh was asked for, or it must discover again itself ($4), and it may ($3). */
const REPEAT = '((refresh_again OR $4) AND $3)';

/**
 * Ends a discovery round of the lease holder `token`: when another refresh was asked for meanwhile, or the holder
 * itself must discover again (`mustRepeat`), and `mayRepeat`, keeps the lease (renewed) and answers true (discover
 * again); otherwise lets it go and answers false, as it does when `token` holds it no more.
 */
export async function finishRefreshRound(db: Queryable, serverId: string, token: string, leaseSeconds: number, mayRepeat: boolean, mustRepeat: boolean): Promise<boolean> {
  const { rows } = await db.query<{ again: boolean }>(
    `UPDATE catalog.mcp_servers
        SET refresh_lease_until = CASE WHEN ${REPEAT} THEN now() + make_interval(secs => $5) END,
            refresh_lease_replica = CASE WHEN ${REPEAT} THEN refresh_lease_replica END,
            refresh_lease_token = CASE WHEN ${REPEAT} THEN refresh_lease_token END,
            refresh_again = false
      WHERE id = $1 AND refresh_lease_token = $2
      RETURNING refresh_lease_until IS NOT NULL AS again`,
    [serverId, token, mayRepeat, mustRepeat, leaseSeconds],
  );
  return rows[0]?.again ?? false;
}

/** Lets go of the lease `token` holds; nothing when it holds it no more (another refresh took it over). */
export async function releaseRefreshLease(db: Queryable, serverId: string, token: string): Promise<void> {
  await db.query(
    `UPDATE catalog.mcp_servers
        SET refresh_lease_until = NULL, refresh_lease_replica = NULL, refresh_lease_token = NULL, refresh_again = false
      WHERE id = $1 AND refresh_lease_token = $2`,
    [serverId, token],
  );
}

/** Whether `token` holds the server's lease now (inside a transaction that locked the row: until it ends). */
export async function holdsRefreshLease(db: Queryable, serverId: string, token: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM catalog.mcp_servers WHERE id = $1 AND refresh_lease_token = $2`, [serverId, token]);
  return rows.length > 0;
}
