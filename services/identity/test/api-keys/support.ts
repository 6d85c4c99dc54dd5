import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { ApiClient, TEST_ADMIN, type TestPlatform } from '@platform/test';

export const PASSWORD = 'a long enough password 1';
export type TeamRole = 'owner' | 'admin' | 'editor' | 'member';

const unique = (label: string) => `${label}-${randomUUID().slice(0, 8)}`;

/** A signed-in platform admin. */
export async function adminClient(platform: TestPlatform): Promise<ApiClient> {
  const admin = new ApiClient(platform);
  const response = await admin.signIn(TEST_ADMIN.email, TEST_ADMIN.password);
  if (response.status !== 200) throw new Error(`admin sign-in failed: ${response.status} ${JSON.stringify(response.body)}`);
  return admin;
}

export interface TestPerson {
  id: string;
  email: string;
  client: ApiClient;
}

/** A person made through the admin API, with a client signed in as them. */
export async function newPerson(
  platform: TestPlatform,
  admin: ApiClient,
  label = 'person',
  platformRole?: 'admin' | 'auditor' | 'staff',
): Promise<TestPerson> {
  const email = `${unique(label.toLowerCase().replace(/[^a-z0-9]+/g, '-'))}@example.test`;
  const created = await admin.post('/v1/admin/people', { email, displayName: label, password: PASSWORD, ...(platformRole ? { platformRole } : {}) });
  if (created.status !== 201) throw new Error(`create person failed: ${created.status} ${JSON.stringify(created.body)}`);
  const client = new ApiClient(platform);
  const signedIn = await client.signIn(email, PASSWORD);
  if (signedIn.status !== 200) throw new Error(`sign-in failed: ${signedIn.status}`);
  return { id: created.body.data.id, email, client };
}

/** A team owned by `owner`, with the other people added in their roles; returns its slug. */
export async function newTeam(admin: ApiClient, owner: TestPerson, members: [TestPerson, TeamRole][] = []): Promise<string> {
  const slug = unique('team');
  const created = await admin.post('/v1/teams', { slug, name: slug, ownerId: owner.id });
  if (created.status !== 201) throw new Error(`create team failed: ${created.status} ${JSON.stringify(created.body)}`);
  for (const [person, role] of members) {
    const added = await admin.post(`/v1/teams/${slug}/members`, { personId: person.id, role });
    if (added.status !== 201) throw new Error(`add member failed: ${added.status} ${JSON.stringify(added.body)}`);
  }
  return slug;
}

/** A pg client on the platform's own database, when it runs on real Postgres (else null: embedded PGlite). */
export async function databaseOf(platform: TestPlatform): Promise<Client | null> {
  if (!platform.env.DATABASE_URL) return null;
  const client = new Client({ connectionString: platform.env.DATABASE_URL });
  await client.connect();
  return client;
}

/** Whether `text` occurs anywhere in the identity tables that could leak a key: keys, the outbox, the audit log. */
export async function keyTablesContain(db: Client, text: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT (SELECT count(*) FROM identity.api_keys k WHERE k::text LIKE '%' || $1 || '%')
          + (SELECT count(*) FROM identity.outbox o WHERE o::text LIKE '%' || $1 || '%')
          + (SELECT count(*) FROM identity.audit_entries a WHERE a::text LIKE '%' || $1 || '%') AS hits`,
    [text],
  );
  return Number(rows[0].hits) > 0;
}

/** The audit events (from the outbox) of one action about one target. */
export async function auditEventsOf(db: Client, action: string, targetId: string): Promise<Record<string, any>[]> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const { rows } = await db.query(`SELECT payload FROM identity.outbox WHERE payload::text LIKE '%' || $1 || '%' ORDER BY id`, [targetId]);
  return rows
    .map((row) => row.payload)
    .filter((payload) => payload.type === action);
}
