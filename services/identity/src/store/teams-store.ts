import type { Queryable } from '@platform/runtime';
import type { RoleName, TeamRow } from './mappers';

export const TEAM_COLUMNS =
  't.id, t.slug, t.name, t.kind, t.personal_owner_id, t.archived_at, t.revision, t.created_at, t.updated_at, t.publishing_override, ' +
  '(SELECT count(*) FROM identity.memberships m WHERE m.team_id = t.id) AS member_count';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A team by slug or id (§2.0: `{team}` accepts either). */
export async function findTeamByRef(db: Queryable, ref: string): Promise<TeamRow | null> {
  const byId = UUID.test(ref);
  const { rows } = await db.query<TeamRow>(
    `SELECT ${TEAM_COLUMNS} FROM identity.teams t WHERE ${byId ? 't.id = $1::uuid' : 't.slug = $1'}`,
    [byId ? ref.toLowerCase() : ref],
  );
  return rows[0] ?? null;
}

export async function findTeamById(db: Queryable, id: string): Promise<TeamRow | null> {
  const { rows } = await db.query<TeamRow>(`SELECT ${TEAM_COLUMNS} FROM identity.teams t WHERE t.id = $1`, [id]);
  return rows[0] ?? null;
}

/**
 * The team, its row held FOR SHARE until the transaction ends: for a change that an archived team refuses.
 * Archiving locks the row FOR UPDATE, so it waits for such a change to commit, and a change that waited for an
 * archive reads the archived row; changes that share the lock do not wait for each other.
 */
export async function shareLockTeam(tx: Queryable, id: string): Promise<TeamRow | null> {
  const { rows } = await tx.query('SELECT 1 FROM identity.teams WHERE id = $1 FOR SHARE', [id]);
  return rows.length > 0 ? findTeamById(tx, id) : null;
}

export async function membershipRole(db: Queryable, teamId: string, personId: string): Promise<RoleName | null> {
  const { rows } = await db.query<{ role: RoleName }>(
    'SELECT role FROM identity.memberships WHERE team_id = $1 AND person_id = $2',
    [teamId, personId],
  );
  return rows[0]?.role ?? null;
}

export async function insertTeam(
  db: Queryable,
  team: { id: string; slug: string; name: string; kind: TeamRow['kind']; personalOwnerId: string | null },
): Promise<void> {
  await db.query(
    'INSERT INTO identity.teams (id, slug, name, kind, personal_owner_id) VALUES ($1, $2, $3, $4, $5)',
    [team.id, team.slug, team.name, team.kind, team.personalOwnerId],
  );
}

export async function insertMembership(db: Queryable, teamId: string, personId: string, role: RoleName): Promise<void> {
  await db.query('INSERT INTO identity.memberships (team_id, person_id, role) VALUES ($1, $2, $3)', [teamId, personId, role]);
}
