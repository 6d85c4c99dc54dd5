import { AppError, decodeCursor, type Queryable } from '@platform/runtime';
import type { TeamRow } from './mappers';
import { TEAM_COLUMNS, findTeamById } from './teams-store';

/**
 * Locks a team's row for the rest of the transaction and reads it. Every membership change takes this lock
 * first, so two concurrent changes cannot both see "another owner remains" and leave a team without owners.
 */
export async function lockTeam(tx: Queryable, teamId: string): Promise<TeamRow | null> {
  const { rows } = await tx.query<{ id: string }>('SELECT id FROM identity.teams WHERE id = $1 FOR UPDATE', [teamId]);
  return rows[0] ? findTeamById(tx, teamId) : null;
}

export async function slugTaken(db: Queryable, slug: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM identity.teams WHERE slug = $1', [slug]);
  return rows.length > 0;
}

export interface TeamFilter {
  /** Only teams this person belongs to; null for every team. */
  memberPersonId: string | null;
  includeArchived: boolean;
  kind: TeamRow['kind'] | null;
}

/** One page of teams ordered by slug (unique, so the last slug is the position to resume after). */
export async function listTeamRows(db: Queryable, filter: TeamFilter, afterSlug: string | null, limit: number): Promise<TeamRow[]> {
  const conditions: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  if (filter.memberPersonId) {
    conditions.push(`EXISTS (SELECT 1 FROM identity.memberships m WHERE m.team_id = t.id AND m.person_id = ${param(filter.memberPersonId)})`);
  }
  if (!filter.includeArchived) conditions.push('t.archived_at IS NULL');
  if (filter.kind) conditions.push(`t.kind = ${param(filter.kind)}`);
  if (afterSlug !== null) conditions.push(`t.slug > ${param(afterSlug)}`);
  const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  const { rows } = await db.query<TeamRow>(
    `SELECT ${TEAM_COLUMNS} FROM identity.teams t ${where} ORDER BY t.slug LIMIT ${param(limit)}`,
    params,
  );
  return rows;
}

/**
 * Renames and/or (un)archives a team, moving its revision on. Only when the revision is still `expected`;
 * the caller holds the row lock, so a miss here means the team changed under it.
 */
export async function updateTeamRow(
  tx: Queryable,
  teamId: string,
  expected: string,
  change: { name: string | null; archived: boolean | null },
): Promise<TeamRow> {
  const { rowCount } = await tx.query(
    `UPDATE identity.teams
        SET name = coalesce($3, name),
            archived_at = CASE WHEN $4::boolean IS NULL THEN archived_at
                               WHEN $4::boolean THEN coalesce(archived_at, now())
                               ELSE NULL END,
            revision = revision + 1, updated_at = now()
      WHERE id = $1 AND revision = $2`,
    [teamId, expected, change.name, change.archived],
  );
  if (rowCount === 0) throw new AppError('precondition_failed', 'The team has changed; read it again and retry');
  return (await findTeamById(tx, teamId))!;
}

/** Whether a Postgres error is a unique-constraint violation (a concurrent insert won the race). */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are uuids; anything else names no row (and must not reach a `uuid` column, where it would be an error). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 200;

export function pageLimit(page: { pageSize: number } | undefined): number {
  const size = page?.pageSize ?? 0;
  return size <= 0 ? DEFAULT_PAGE_SIZE : Math.min(size, MAX_PAGE_SIZE);
}

/** The position a page resumes after (the runtime's cursor codec); a cursor these lists did not make is a 400. */
export function readCursor<T>(page: { cursor: string } | undefined, read: (value: unknown) => T | null): T | null {
  return page?.cursor ? decodeCursor(page.cursor, read) : null;
}

/** Sets or clears (null) a team's publishing override, moving its revision on; same revision rule as updateTeamRow. */
export async function setPublishingOverrideRow(tx: Queryable, teamId: string, expected: string, override: string | null): Promise<TeamRow> {
  const { rowCount } = await tx.query(
    `UPDATE identity.teams SET publishing_override = $3, revision = revision + 1, updated_at = now()
      WHERE id = $1 AND revision = $2`,
    [teamId, expected, override],
  );
  if (rowCount === 0) throw new AppError('precondition_failed', 'The team has changed; read it again and retry');
  return (await findTeamById(tx, teamId))!;
}
