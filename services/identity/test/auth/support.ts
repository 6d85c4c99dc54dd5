import { ApiClient, TEST_ADMIN, type TestPlatform } from '@platform/test';

let counter = 0;

/** A unique email for this run. */
export function uniqueEmail(label: string): string {
  counter += 1;
  return `${label}-${Date.now().toString(36)}-${counter}@example.test`;
}

export const PASSWORD = 'a long enough password 1';

/** A signed-in platform admin client. */
export async function adminClient(platform: TestPlatform): Promise<ApiClient> {
  const admin = new ApiClient(platform);
  const response = await admin.signIn(TEST_ADMIN.email, TEST_ADMIN.password);
  if (response.status !== 200) throw new Error(`admin sign-in failed: ${response.status} ${JSON.stringify(response.body)}`);
  return admin;
}

/** Creates a person through the admin API and returns them with a client signed in as them. */
export async function newPerson(
  platform: TestPlatform,
  admin: ApiClient,
  options: { label?: string; platformRole?: 'admin' | 'auditor' | 'staff' } = {},
): Promise<{ id: string; email: string; revision: number; client: ApiClient }> {
  const email = uniqueEmail(options.label ?? 'person');
  const created = await admin.post('/v1/admin/people', {
    email,
    displayName: options.label ?? 'Person',
    password: PASSWORD,
    ...(options.platformRole ? { platformRole: options.platformRole } : {}),
  });
  if (created.status !== 201) throw new Error(`create person failed: ${created.status} ${JSON.stringify(created.body)}`);
  const client = new ApiClient(platform);
  const signedIn = await client.signIn(email, PASSWORD);
  if (signedIn.status !== 200) throw new Error(`sign-in failed: ${signedIn.status}`);
  return { id: created.body.data.id, email, revision: created.body.data.revision, client };
}
