import type { Queryable } from '@platform/runtime';
import { claimDue } from './claim-due';
import { MCP_SERVER_COLUMNS } from './mcp-servers-store';
import type { McpServerRow } from './mcp-servers-mappers';
import { stillConnectsAs, type UpstreamConnection } from './upstream-connection';

export type HealthStatus = 'unknown' | 'healthy' | 'unhealthy';

/** What one health check found; the message is the platform's own text. */
export interface HealthOutcome {
  status: 'healthy' | 'unhealthy';
  latencyMs: number | null;
  errorClass: string | null;
  signInRequired: boolean;
  message: string | null;
}

/** The stored health after a check, with the status it had before (to tell a transition). */
export interface RecordedHealth {
  status: HealthStatus;
  /** Whether, before this check, the last health event written for the server was server.unhealthy. */
  downAnnounced: boolean;
  statusSince: Date;
  teamId: string;
  slug: string;
  name: string;
}

/**
 * Claims up to `limit` enabled servers whose health check is due and moves their next check one interval forward,
 * in one statement: rows another replica is claiming are skipped (SKIP LOCKED), and a claimed row is not due any
 * more once this commits, so no two checkers take the same server in one round.
 */
export async function claimDueHealthChecks(db: Queryable, limit: number, intervalSeconds: number): Promise<McpServerRow[]> {
  return claimDue<McpServerRow>(db, 'next_health_check_at', limit, intervalSeconds, MCP_SERVER_COLUMNS);
}

/**
 * Stores a check's outcome on the server; `health_status_since` moves only when the status changes, and what it says
 * is now announced (`health_down_announced`: true after an unhealthy check, false after a healthy one, for the
 * caller to write the event that makes it so). Null, storing
 * nothing, when the server is gone or no longer connects as probed (its URL, transport or headers changed while the
 * check ran: that change already forgot the health, and what the old connection met says nothing about the new one).
 * Run it in the transaction that writes the transition's event.
 */
export async function recordHealth(db: Queryable, serverId: string, probed: UpstreamConnection, outcome: HealthOutcome): Promise<RecordedHealth | null> {
  const unchanged = stillConnectsAs(probed, 7);
  const { rows } = await db.query<{ down_announced: boolean; health_status: HealthStatus; health_status_since: Date; team_id: string; slug: string; name: string }>(
    `WITH old AS (SELECT id, health_status, health_down_announced FROM catalog.mcp_servers WHERE id = $1 AND ${unchanged.condition} FOR UPDATE)
     UPDATE catalog.mcp_servers s
        SET health_status = $2,
            health_status_since = CASE WHEN old.health_status = $2 AND s.health_status_since IS NOT NULL THEN s.health_status_since ELSE now() END,
            health_checked_at = now(),
            health_latency_ms = $3,
            health_error_class = $4,
            health_sign_in_required = $5,
            health_message = $6,
            health_down_announced = ($2 = 'unhealthy')
       FROM old
      WHERE s.id = old.id
      RETURNING old.health_down_announced AS down_announced, s.health_status, s.health_status_since, s.team_id, s.slug, s.name`,
    [serverId, outcome.status, outcome.latencyMs, outcome.errorClass, outcome.signInRequired, outcome.message, ...unchanged.values],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    status: row.health_status,
    downAnnounced: row.down_announced,
    statusSince: row.health_status_since,
    teamId: row.team_id,
    slug: row.slug,
    name: row.name,
  };
}

/**
 * SET clauses of an UPDATE that forget a server's health when its connection changes (`changed`, from
 * `connectionChanges`: its URL, transport or headers differ from the stored ones) and make it due for a check at
 * once: a health measured over the old connection says nothing about the new one.
 */
export function healthResetWhen(changed: string): string {
  return [
    `health_status = CASE WHEN ${changed} THEN 'unknown' ELSE health_status END`,
    `health_status_since = CASE WHEN ${changed} THEN now() ELSE health_status_since END`,
    `health_checked_at = CASE WHEN ${changed} THEN NULL ELSE health_checked_at END`,
    `health_latency_ms = CASE WHEN ${changed} THEN NULL ELSE health_latency_ms END`,
    `health_error_class = CASE WHEN ${changed} THEN NULL ELSE health_error_class END`,
    `health_sign_in_required = CASE WHEN ${changed} THEN false ELSE health_sign_in_required END`,
    `health_message = CASE WHEN ${changed} THEN NULL ELSE health_message END`,
    `next_health_check_at = CASE WHEN ${changed} THEN now() ELSE next_health_check_at END`,
  ].join(',\n            ');
}
