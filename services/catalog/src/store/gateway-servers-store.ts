import type { Queryable } from '@platform/runtime';
import { offeredToTeamSql, type TeamAudience } from './visibility';

/** A server a gateway may name: one offered to the gateway's team. */
export interface OfferedServerRow {
  id: string;
  slug: string;
  team_id: string;
}

/** Present capability names of servers, as the composition check compares them. */
export interface CapabilityNameRow {
  server_id: string;
  kind: string;
  name: string;
}

/** Of the given servers, those offered to the team (others, and unknown ids, are simply absent). */
export async function findOfferedServers(db: Queryable, ids: readonly string[], audience: TeamAudience): Promise<OfferedServerRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<OfferedServerRow>(
    `SELECT s.id, s.slug, s.team_id FROM catalog.mcp_servers s WHERE s.id = ANY($1::uuid[]) AND ${offeredToTeamSql('s', '$2', '$3')}`,
    [ids, audience.teamId, audience.personal],
  );
  return rows;
}

/** The capabilities present upstream now (gone_at null), approved or not, of the given servers. */
export async function listPresentCapabilityNames(db: Queryable, serverIds: readonly string[]): Promise<CapabilityNameRow[]> {
  if (serverIds.length === 0) return [];
  const { rows } = await db.query<CapabilityNameRow>(
    `SELECT server_id, kind, name FROM catalog.capabilities WHERE server_id = ANY($1::uuid[]) AND gone_at IS NULL ORDER BY kind, name`,
    [serverIds],
  );
  return rows;
}

/**
 * A page of the ids of the gateways that name the server (whatever their team, and whether or not it is offered to
 * them now), by id, after `after` when given: at most `limit`, fewer only on the last page.
 */
export async function listGatewaysNamingServer(db: Queryable, serverId: string, after: string | null, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ gateway_id: string }>(
    `SELECT gateway_id FROM catalog.gateway_servers
      WHERE server_id = $1 AND ($2::uuid IS NULL OR gateway_id > $2::uuid) ORDER BY gateway_id LIMIT $3`,
    [serverId, after, limit],
  );
  return rows.map((row) => row.gateway_id);
}
