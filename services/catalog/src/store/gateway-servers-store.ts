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

/**
 * Holds the given servers offered to the team against deletion until the transaction ends, in id order; answers
 * the ids held. FOR KEY SHARE is what the foreign key of the rows the change then inserts takes anyway: taken first,
 * a server's deletion (which locks its row FOR UPDATE before it removes the server's gateway rows) either waits for
 * the change or is over before the change reads the server. Without it the change read a server the deletion was
 * removing and then failed its insert (a foreign key violation), or deadlocked with the deletion over the gateway's
 * row of that server: a 500. Servers not offered to the team are neither locked nor waited for: another team's id
 * is answered as promptly as an unknown one, and never delays that team's own changes.
 */
export async function holdServersAgainstDeletion(db: Queryable, ids: readonly string[], audience: TeamAudience): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    `SELECT s.id FROM catalog.mcp_servers s WHERE s.id = ANY($1::uuid[]) AND ${offeredToTeamSql('s', '$2', '$3')} ORDER BY s.id FOR KEY SHARE OF s`,
    [ids, audience.teamId, audience.personal],
  );
  return rows.map((row) => row.id);
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
