import { randomUUID } from 'node:crypto';
import { createServiceClients, type ServiceClients } from '@platform/runtime';
import { ApiClient, TEST_ADMIN, type TestPlatform } from '@platform/test';

export const PASSWORD = 'a long enough test password';
export type TeamRole = 'owner' | 'admin' | 'editor' | 'member';

export interface TestPerson {
  id: string;
  email: string;
  client: ApiClient;
}

export const unique = (label: string): string => `${label}-${randomUUID().slice(0, 8)}`;

async function signedIn(platform: TestPlatform, email: string, password: string): Promise<ApiClient> {
  const client = new ApiClient(platform);
  const response = await client.signIn(email, password);
  if (response.status !== 200) throw new Error(`sign-in of ${email} failed: ${response.status} ${JSON.stringify(response.body)}`);
  return client;
}

export function adminClient(platform: TestPlatform): Promise<ApiClient> {
  return signedIn(platform, TEST_ADMIN.email, TEST_ADMIN.password);
}

/** A person made through the admin API (POST /v1/admin/people), signed in. */
export async function newPerson(platform: TestPlatform, admin: ApiClient, label: string, platformRole?: 'admin' | 'auditor' | 'staff'): Promise<TestPerson> {
  const email = `${unique(label)}@example.test`;
  const response = await admin.post('/v1/admin/people', { email, displayName: label, password: PASSWORD, ...(platformRole ? { platformRole } : {}) });
  if (response.status !== 201) throw new Error(`creating ${label} failed: ${response.status} ${JSON.stringify(response.body)}`);
  return { id: response.body.data.id, email, client: await signedIn(platform, email, PASSWORD) };
}

/** A team owned by `owner` (POST /v1/teams) with the given members added (POST /v1/teams/{team}/members). */
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

/** gRPC clients of the running platform's services, as another service would hold them. */
export function grpcClients(platform: TestPlatform): ServiceClients {
  return createServiceClients({
    resolveAddress: () => platform.platform.grpcAddress!,
    deadlineMs: 10_000,
    logger: platform.platform.context.logger,
  });
}

/** Waits (bounded) until `read` returns something; the audit log is filled by a consumer, after the change. */
export async function eventually<T>(read: () => Promise<T | null | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
