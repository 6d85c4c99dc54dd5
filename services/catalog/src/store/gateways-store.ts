import type { Queryable } from '@platform/runtime';
import type { GatewayRow } from './mappers';

const SELECT_GATEWAYS = `
  SELECT id, team_id, slug, name, enabled, revision, created_by, created_at, updated_at
    FROM catalog.gateways`;

export interface NewGatewayRow {
  id: string;
  teamId: string;
  slug: string;
  name: string;
  enabled: boolean;
  createdBy: string | null;
}

export async function insertGateway(db: Queryable, gateway: NewGatewayRow): Promise<GatewayRow> {
  const { rows } = await db.query<GatewayRow>(
    `INSERT INTO catalog.gateways (id, team_id, slug, name, enabled, created_by)
     VALUES ($1, $2, $3, $4, $5, $6)
     RETURNING id, team_id, slug, name, enabled, revision, created_by, created_at, updated_at`,
    [gateway.id, gateway.teamId, gateway.slug, gateway.name, gateway.enabled, gateway.createdBy],
  );
  return rows[0]!;
}

/** Whether any gateway of the installation has this slug (slugs are unique across teams). */
export async function gatewaySlugTaken(db: Queryable, slug: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM catalog.gateways WHERE slug = $1', [slug]);
  return rows.length > 0;
}

export async function findTeamGatewayById(db: Queryable, teamId: string, id: string): Promise<GatewayRow | null> {
  const { rows } = await db.query<GatewayRow>(`${SELECT_GATEWAYS} WHERE team_id = $1 AND id = $2`, [teamId, id]);
  return rows[0] ?? null;
}

export async function findTeamGatewayBySlug(db: Queryable, teamId: string, slug: string): Promise<GatewayRow | null> {
  const { rows } = await db.query<GatewayRow>(`${SELECT_GATEWAYS} WHERE team_id = $1 AND slug = $2`, [teamId, slug]);
  return rows[0] ?? null;
}

/** The gateway served at /mcp/{slug}, whatever its team. */
export async function findGatewayBySlug(db: Queryable, slug: string): Promise<GatewayRow | null> {
  const { rows } = await db.query<GatewayRow>(`${SELECT_GATEWAYS} WHERE slug = $1`, [slug]);
  return rows[0] ?? null;
}

/** A team's gateways in slug order, after `afterSlug` when given; one row more than `limit` tells a next page exists. */
export async function listTeamGateways(db: Queryable, teamId: string, afterSlug: string | null, limit: number): Promise<GatewayRow[]> {
  const { rows } = await db.query<GatewayRow>(
    `${SELECT_GATEWAYS} WHERE team_id = $1 AND ($2::text IS NULL OR slug > $2::text) ORDER BY slug LIMIT $3`,
    [teamId, afterSlug, limit + 1],
  );
  return rows;
}

/** A Postgres unique violation: here, a concurrent create that took the same slug. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}
