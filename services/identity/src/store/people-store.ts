import type { Queryable } from '@platform/runtime';
import type { PersonRow } from './mappers';

const PERSON_COLUMNS = 'id, email, display_name, password_hash, status, platform_role, last_sign_in_at, revision, created_at, updated_at';

export async function findPersonById(db: Queryable, id: string): Promise<PersonRow | null> {
  const { rows } = await db.query<PersonRow>(`SELECT ${PERSON_COLUMNS} FROM identity.people WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

export async function findPersonByEmail(db: Queryable, email: string): Promise<PersonRow | null> {
  const { rows } = await db.query<PersonRow>(`SELECT ${PERSON_COLUMNS} FROM identity.people WHERE lower(email) = lower($1)`, [email]);
  return rows[0] ?? null;
}

export async function insertPerson(
  db: Queryable,
  person: { id: string; email: string; displayName: string; passwordHash: string | null; platformRole: PersonRow['platform_role'] },
): Promise<PersonRow> {
  const { rows } = await db.query<PersonRow>(
    `INSERT INTO identity.people (id, email, display_name, password_hash, platform_role)
     VALUES ($1, $2, $3, $4, $5) RETURNING ${PERSON_COLUMNS}`,
    [person.id, person.email, person.displayName, person.passwordHash, person.platformRole],
  );
  return rows[0]!;
}

export { PERSON_COLUMNS };
