import type { Client } from 'pg';
import { adminClient, databaseOf, newPerson, newTeam, startTestPlatform, unique, type TestPerson, type TestPlatform } from '@platform/test';

/** What the capability tests share: a platform, its database, and a team with its owner. */
export interface CapabilityTestbed {
  platform: TestPlatform;
  db: Client;
  owner: TestPerson;
  team: string;
  /** Registers a server of the team at `url` (a fresh slug from `label`) and returns its id. */
  register(label: string, url: string, timeoutSeconds?: number): Promise<string>;
}

/**
 * A testbed for the enclosing describe block, made before its tests and stopped after them: discovery and health
 * checks run only when a test asks (no schedule: the test platform's default), upstreams on 127.0.0.1 are allowed, `env` adds to that. Read it
 * through the returned getter in tests (it exists once `beforeAll` has run).
 */
export function capabilityTestbed(env: Record<string, string> = {}): () => CapabilityTestbed {
  let testbed: CapabilityTestbed | undefined;
  let platform: TestPlatform | undefined;
  let db: Client | undefined;
  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', ...env } });
    db = await databaseOf(platform, { required: true });
    const admin = await adminClient(platform);
    const owner = await newPerson(platform, admin, 'owner');
    const team = await newTeam(admin, owner);
    testbed = {
      platform,
      db,
      owner,
      team,
      async register(label, url, timeoutSeconds = 30) {
        const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: `Server ${label}`, slug: unique(label), url, timeoutSeconds });
        expect(created.status).toBe(201);
        return created.body.data.id as string;
      },
    };
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await platform?.stop();
  });
  return () => testbed!;
}
