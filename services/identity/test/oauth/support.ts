import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { createLogger, createServiceClients, type ServiceClients } from '@platform/runtime';
import { ApiClient, TEST_ADMIN, type TestPlatform } from '@platform/test';

export const logger = createLogger({ level: 'silent' });

export function grpcClients(platform: TestPlatform): ServiceClients {
  return createServiceClients({ resolveAddress: () => platform.platform.grpcAddress!, deadlineMs: 5000, logger });
}

export async function signedInAdmin(platform: TestPlatform): Promise<ApiClient> {
  const admin = new ApiClient(platform);
  const response = await admin.signIn(TEST_ADMIN.email, TEST_ADMIN.password);
  if (response.status !== 200) throw new Error(`admin sign-in failed: ${response.status}`);
  return admin;
}

/** A person created through the admin API. */
export async function newPerson(admin: ApiClient, label: string): Promise<{ id: string; email: string; revision: number }> {
  const email = `${label}-${randomUUID().slice(0, 8)}@example.test`;
  const response = await admin.post('/v1/admin/people', { email, displayName: label, password: 'a long enough test password' });
  if (response.status !== 201) throw new Error(`creating ${label} failed: ${response.status} ${JSON.stringify(response.body)}`);
  return { id: response.body.data.id, email, revision: response.body.data.revision };
}

/** A PKCE pair (RFC 7636 S256). */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A gateway as the edge would name it (ids and slugs are the catalog's; the identity service takes them as given). */
export function gateway(appUrl: string): { id: string; slug: string; resource: string } {
  const slug = `gw-${randomUUID().slice(0, 8)}`;
  return { id: randomUUID(), slug, resource: `${appUrl}/mcp/${slug}` };
}

/** A client of the platform's own database (real Postgres only): moves clocks back and checks what is stored. */
export async function databaseOf(platform: TestPlatform): Promise<Client> {
  const url = platform.env.DATABASE_URL;
  if (!url) throw new Error('these tests need real Postgres (source ~/.cache/mcp-platform/test.env)');
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}

export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met in time; last value: ${JSON.stringify(value).slice(0, 2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

export interface StoredAuditEntry {
  action: string;
  team_id: string;
  actor: Record<string, unknown>;
  target_type: string;
  target_id: string;
  metadata: Record<string, unknown>;
  client_ip: string;
  request_id: string;
  before: unknown;
  after: unknown;
}

/** Audit entries stored for a target (through the outbox, the bus and the audit consumer). */
export function auditEntries(db: Client, action: string, targetId: string): Promise<StoredAuditEntry[]> {
  return db
    .query<StoredAuditEntry>(
      `SELECT action, team_id, actor, target_type, target_id, metadata, client_ip, request_id, before, after
         FROM identity.audit_entries WHERE action = $1 AND target_id = $2 ORDER BY id`,
      [action, targetId],
    )
    .then((result) => result.rows);
}

export const PLATFORM_TEAM_ID = '00000000-0000-4000-8000-000000000001';
