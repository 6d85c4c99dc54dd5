import type { Member } from '@platform/proto/gen/platform/identity/v1/identity';
import type { Queryable } from '@platform/runtime';
import { PERSON_COLUMNS } from './people-store';
import { iso, teamRoleOf, toPerson, type PersonRow, type RoleName } from './mappers';

/** A membership joined with its person. */
export interface MemberRow extends PersonRow {
  team_id: string;
  role: RoleName;
  membership_revision: string;
  joined_at: Date;
}

// A member's person without the password hash, which nothing here needs.
const PERSON_FIELDS = PERSON_COLUMNS.split(', ')
  .map((column) => (column === 'password_hash' ? 'NULL::text AS password_hash' : `p.${column}`))
  .join(', ');

const SELECT_MEMBERS = `
  SELECT ${PERSON_FIELDS}, m.team_id, m.role, m.revision AS membership_revision, m.created_at AS joined_at
    FROM identity.memberships m JOIN identity.people p ON p.id = m.person_id`;

export function toMember(row: MemberRow): Member {
  return {
    teamId: row.team_id,
    person: toPerson(row),
    role: teamRoleOf(row.role),
    joinedAt: iso(row.joined_at),
    revision: row.membership_revision,
  };
}

export async function findMember(db: Queryable, teamId: string, personId: string): Promise<MemberRow | null> {
  const { rows } = await db.query<MemberRow>(`${SELECT_MEMBERS} WHERE m.team_id = $1 AND m.person_id = $2`, [teamId, personId]);
  return rows[0] ?? null;
}

/** Members ordered by email then id; `after` is the last row of the previous page. */
export async function listMemberRows(
  db: Queryable,
  teamId: string,
  after: { email: string; id: string } | null,
  limit: number,
): Promise<MemberRow[]> {
  const { rows } = after
    ? await db.query<MemberRow>(
        `${SELECT_MEMBERS} WHERE m.team_id = $1 AND (lower(p.email), p.id) > ($2, $3::uuid) ORDER BY lower(p.email), p.id LIMIT $4`,
        [teamId, after.email, after.id, limit],
      )
    : await db.query<MemberRow>(`${SELECT_MEMBERS} WHERE m.team_id = $1 ORDER BY lower(p.email), p.id LIMIT $2`, [teamId, limit]);
  return rows;
}

/** Adds a membership; false when the person already is a member (also when a concurrent add won). */
export async function addMembership(tx: Queryable, teamId: string, personId: string, role: RoleName): Promise<boolean> {
  const { rowCount } = await tx.query(
    'INSERT INTO identity.memberships (team_id, person_id, role) VALUES ($1, $2, $3) ON CONFLICT (team_id, person_id) DO NOTHING',
    [teamId, personId, role],
  );
  return rowCount > 0;
}

export async function countOwners(tx: Queryable, teamId: string): Promise<number> {
  const { rows } = await tx.query<{ owners: string }>(
    "SELECT count(*) AS owners FROM identity.memberships WHERE team_id = $1 AND role = 'owner'",
    [teamId],
  );
  return Number(rows[0]?.owners ?? 0);
}

/** Changes a member's role, moving the membership's revision on; false when `expected` is stale. */
export async function setMemberRole(tx: Queryable, teamId: string, personId: string, expected: string, role: RoleName): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE identity.memberships SET role = $4, revision = revision + 1, updated_at = now()
      WHERE team_id = $1 AND person_id = $2 AND revision = $3`,
    [teamId, personId, expected, role],
  );
  return rowCount > 0;
}

export async function deleteMembership(tx: Queryable, teamId: string, personId: string): Promise<void> {
  await tx.query('DELETE FROM identity.memberships WHERE team_id = $1 AND person_id = $2', [teamId, personId]);
}

/**
 * Revokes the person's personal keys of the team (they act as the person, who has left, §5.1). Service keys
 * act as the team and keep working. Returns how many were revoked.
 */
export async function revokePersonalKeys(tx: Queryable, teamId: string, personId: string): Promise<number> {
  const { rowCount } = await tx.query(
    `UPDATE identity.api_keys SET revoked_at = now()
      WHERE team_id = $1 AND person_id = $2 AND kind = 'personal' AND revoked_at IS NULL`,
    [teamId, personId],
  );
  return rowCount;
}
