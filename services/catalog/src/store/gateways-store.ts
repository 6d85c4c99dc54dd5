import type { Queryable } from '@platform/runtime';
import type { GatewayRow } from './mappers';

/** A gateway row with its servers in gateway order (one query: the servers are aggregated as jsonb). */
const SELECT_GATEWAYS = `
  SELECT g.id, g.team_id, g.slug, g.name, g.enabled, g.revision, g.created_by, g.created_at, g.updated_at,
         COALESCE((
           SELECT jsonb_agg(jsonb_build_object('server_id', s.id, 'prefix', gs.prefix, 'server_slug', s.slug,
                                               'server_name', s.name, 'server_team_id', s.team_id) ORDER BY gs.position)
             FROM catalog.gateway_servers gs JOIN catalog.mcp_servers s ON s.id = gs.server_id
            WHERE gs.gateway_id = g.id), '[]'::jsonb) AS servers
    FROM catalog.gateways g`;

export interface NewGatewayRow {
  id: string;
  teamId: string;
  slug: string;
  name: string;
  enabled: boolean;
  createdBy: string | null;
}

/** The fields of a gateway a change sets (its servers are replaced separately). */
export interface GatewayFields {
  slug: string;
  name: string;
  enabled: boolean;
}

/** A server of a gateway as stored: the list's order is the gateway's order. */
export interface GatewayServerEntry {
  serverId: string;
  prefix: string;
}

export async function insertGateway(db: Queryable, gateway: NewGatewayRow): Promise<void> {
  await db.query(
    `INSERT INTO catalog.gateways (id, team_id, slug, name, enabled, created_by) VALUES ($1, $2, $3, $4, $5, $6)`,
    [gateway.id, gateway.teamId, gateway.slug, gateway.name, gateway.enabled, gateway.createdBy],
  );
}

/** Makes `servers` the gateway's list, in that order. */
export async function replaceGatewayServers(db: Queryable, gatewayId: string, servers: readonly GatewayServerEntry[]): Promise<void> {
  await db.query('DELETE FROM catalog.gateway_servers WHERE gateway_id = $1', [gatewayId]);
  if (servers.length === 0) return;
  await db.query(
    `INSERT INTO catalog.gateway_servers (gateway_id, server_id, prefix, position)
     SELECT $1, entry.server_id, entry.prefix, entry.position - 1
       FROM unnest($2::uuid[], $3::text[]) WITH ORDINALITY AS entry (server_id, prefix, position)`,
    [gatewayId, servers.map((s) => s.serverId), servers.map((s) => s.prefix)],
  );
}

/** Writes the fields and moves the revision when it still matches; false when it does not (or the row is gone). */
export async function updateGatewayRow(db: Queryable, id: string, expectedRevision: string, fields: GatewayFields): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE catalog.gateways SET slug = $3, name = $4, enabled = $5, revision = revision + 1, updated_at = now()
      WHERE id = $1 AND revision = $2`,
    [id, expectedRevision, fields.slug, fields.name, fields.enabled],
  );
  return rowCount > 0;
}

export async function deleteGatewayRow(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM catalog.gateways WHERE id = $1', [id]);
}

/** Whether any other gateway of the installation has this slug (slugs are unique across teams). */
export async function gatewaySlugTaken(db: Queryable, slug: string, exceptId: string | null = null): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM catalog.gateways WHERE slug = $1 AND ($2::uuid IS NULL OR id <> $2::uuid)', [slug, exceptId]);
  return rows.length > 0;
}

export async function findGatewayById(db: Queryable, id: string): Promise<GatewayRow | null> {
  const { rows } = await db.query<GatewayRow>(`${SELECT_GATEWAYS} WHERE g.id = $1`, [id]);
  return rows[0] ?? null;
}

export async function findTeamGatewayById(db: Queryable, teamId: string, id: string, forUpdate = false): Promise<GatewayRow | null> {
  const { rows } = await db.query<GatewayRow>(`${SELECT_GATEWAYS} WHERE g.team_id = $1 AND g.id = $2${forUpdate ? ' FOR UPDATE OF g' : ''}`, [teamId, id]);
  return rows[0] ?? null;
}

export async function findTeamGatewayBySlug(db: Queryable, teamId: string, slug: string, forUpdate = false): Promise<GatewayRow | null> {
  const { rows } = await db.query<GatewayRow>(`${SELECT_GATEWAYS} WHERE g.team_id = $1 AND g.slug = $2${forUpdate ? ' FOR UPDATE OF g' : ''}`, [teamId, slug]);
  return rows[0] ?? null;
}

/** The gateway served at /mcp/{slug}, whatever its team. */
export async function findGatewayBySlug(db: Queryable, slug: string): Promise<GatewayRow | null> {
  const { rows } = await db.query<GatewayRow>(`${SELECT_GATEWAYS} WHERE g.slug = $1`, [slug]);
  return rows[0] ?? null;
}

/** A team's gateways in slug order, after `afterSlug` when given; one row more than `limit` tells a next page exists. */
export async function listTeamGateways(db: Queryable, teamId: string, afterSlug: string | null, limit: number): Promise<GatewayRow[]> {
  const { rows } = await db.query<GatewayRow>(
    `${SELECT_GATEWAYS} WHERE g.team_id = $1 AND ($2::text IS NULL OR g.slug > $2::text) ORDER BY g.slug LIMIT $3`,
    [teamId, afterSlug, limit + 1],
  );
  return rows;
}

/** A Postgres unique violation: here, a concurrent create that took the same slug. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}
