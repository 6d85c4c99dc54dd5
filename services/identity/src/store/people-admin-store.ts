import type { Queryable } from '@platform/runtime';
import type { PersonRow, RoleName, TeamRow } from './mappers';
import { PERSON_COLUMNS } from './people-store';
import { TEAM_COLUMNS } from './teams-store';

/** `%`, `_` and `\` in a search text match themselves, not any character (`\` is LIKE's default escape). */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The shortest search text the trigram indexes (migration 0011) can narrow: one trigram. */
const TRIGRAM_LENGTH = 3;

/**
 * A page of people ordered by lower-cased email (unique), after `afterEmail` when given; `query` matches email
 * or display name case-insensitively. Fetches one extra row so the caller knows whether another page exists.
 */
export async function listPeopleRows(
  db: Queryable,
  options: { afterEmail: string | null; limit: number; query: string },
): Promise<PersonRow[]> {
  const conditions: string[] = [];
  const values: unknown[] = [];
  if (options.afterEmail !== null) {
    values.push(options.afterEmail);
    conditions.push(`lower(email) > $${values.length}`);
  }
  if (options.query) {
    values.push(likePattern(options.query));
    conditions.push(`(email ILIKE $${values.length} OR display_name ILIKE $${values.length})`);
  }
  values.push(options.limit + 1);
  const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  const select = `SELECT ${PERSON_COLUMNS} FROM identity.people ${where}`;
  const page = `ORDER BY lower(email) LIMIT $${values.length}`;
  // Asked for a page in email order, the planner walks the email index and filters, expecting matches spread evenly;
  // when they are few or sit late in that order the walk reads most of the table (220 ms at 100k people). Matches
  // found first through the trigram indexes, then sorted, cost what they match (docs/api.md, People search).
  const sql = options.query.length >= TRIGRAM_LENGTH ? `WITH matched AS MATERIALIZED (${select}) SELECT * FROM matched ${page}` : `${select} ${page}`;
  const { rows } = await db.query<PersonRow>(sql, values);
  return rows;
}

export async function lockPerson(db: Queryable, id: string): Promise<PersonRow | null> {
  const { rows } = await db.query<PersonRow>(`SELECT ${PERSON_COLUMNS} FROM identity.people WHERE id = $1 FOR UPDATE`, [id]);
  return rows[0] ?? null;
}

export interface PersonChanges {
  displayName?: string;
  status?: PersonRow['status'];
  /** null clears the platform role. */
  platformRole?: PersonRow['platform_role'];
  passwordHash?: string;
}

/**
 * The part of `changes` that would alter `row`: a field given the value it already has is no change. A new
 * password always is (its hash is new even for the same password, and setting it ends sessions).
 */
export function personChangesTo(row: PersonRow, changes: PersonChanges): PersonChanges {
  const differing: PersonChanges = {};
  if (changes.displayName !== undefined && changes.displayName !== row.display_name) differing.displayName = changes.displayName;
  if (changes.status !== undefined && changes.status !== row.status) differing.status = changes.status;
  if (changes.platformRole !== undefined && changes.platformRole !== row.platform_role) differing.platformRole = changes.platformRole;
  if (changes.passwordHash !== undefined) differing.passwordHash = changes.passwordHash;
  return differing;
}

/** Applies changes when the revision still matches; null when it does not (or the person is gone). */
export async function updatePersonRow(db: Queryable, id: string, expectedRevision: string, changes: PersonChanges): Promise<PersonRow | null> {
  const sets: string[] = [];
  const values: unknown[] = [id, expectedRevision];
  const set = (column: string, value: unknown) => {
    values.push(value);
    sets.push(`${column} = $${values.length}`);
  };
  if (changes.displayName !== undefined) set('display_name', changes.displayName);
  if (changes.status !== undefined) set('status', changes.status);
  if (changes.platformRole !== undefined) set('platform_role', changes.platformRole);
  if (changes.passwordHash !== undefined) set('password_hash', changes.passwordHash);
  const { rows } = await db.query<PersonRow>(
    `UPDATE identity.people SET ${[...sets, 'revision = revision + 1', 'updated_at = now()'].join(', ')}
      WHERE id = $1 AND revision = $2 RETURNING ${PERSON_COLUMNS}`,
    values,
  );
  return rows[0] ?? null;
}

/** The teams a person belongs to, with their role, personal workspace included; archived teams left out. */
export async function teamsOfPerson(db: Queryable, personId: string): Promise<Array<TeamRow & { role: RoleName }>> {
  const { rows } = await db.query<TeamRow & { role: RoleName }>(
    `SELECT ${TEAM_COLUMNS}, m.role
       FROM identity.memberships m JOIN identity.teams t ON t.id = m.team_id
      WHERE m.person_id = $1 AND t.archived_at IS NULL
      ORDER BY lower(t.name), t.id`,
    [personId],
  );
  return rows;
}
