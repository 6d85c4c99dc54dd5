import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { ApiClient, TEST_ADMIN, type TestPlatform } from '@platform/test';

export const PASSWORD = 'a long enough test password';

/** Signs a person in through the real sign-in route. */
export async function signedIn(platform: TestPlatform, email: string, password = PASSWORD): Promise<ApiClient> {
  const client = new ApiClient(platform);
  const response = await client.signIn(email, password);
  if (response.status !== 200) throw new Error(`sign-in of ${email} failed: ${response.status} ${JSON.stringify(response.body)}`);
  return client;
}

export function signedInAdmin(platform: TestPlatform): Promise<ApiClient> {
  return signedIn(platform, TEST_ADMIN.email, TEST_ADMIN.password);
}

export interface TestPerson {
  id: string;
  email: string;
  client: ApiClient;
}

/** Creates a person as the platform admin (POST /v1/admin/people) and signs them in. */
export async function newPerson(platform: TestPlatform, admin: ApiClient, label: string, platformRole?: string): Promise<TestPerson> {
  const email = `${label}-${randomUUID().slice(0, 8)}@example.test`;
  const response = await admin.post('/v1/admin/people', { email, displayName: label, password: PASSWORD, ...(platformRole ? { platformRole } : {}) });
  if (response.status !== 201) throw new Error(`creating ${label} failed: ${response.status} ${JSON.stringify(response.body)}`);
  return { id: response.body.data.id, email, client: await signedIn(platform, email) };
}

export function uniqueSlug(label: string): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

/** A client of the platform's own database (real Postgres only), to check what the API cannot show. */
export async function databaseOf(platform: TestPlatform): Promise<Client> {
  const url = platform.env.DATABASE_URL;
  if (!url) throw new Error('these checks need real Postgres (TEST_POSTGRES_URL)');
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}

export const ifMatch = (revision: number): Record<string, string> => ({ 'if-match': `"${revision}"` });
