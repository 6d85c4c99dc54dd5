import type { Client } from 'pg';
import { adminClient, databaseOf, newPerson, newTeam, startTestPlatform, type ApiClient, type TestPerson, type TestPlatform } from '@platform/test';

/** What a race made with held rows (held-rows.ts) needs: a platform, a team, and two connections of its own. */
export interface HeldRowsPlatform {
  platform: TestPlatform;
  admin: ApiClient;
  owner: TestPerson;
  team: string;
  /** Holds rows in a transaction of the test (holdRows); rolled back after each test. */
  holder: Client;
  /** Watches who waits behind the holder (untilWaitingBehind); never in a transaction. */
  observer: Client;
}

/**
 * A platform for the enclosing describe block's held-row races, made before its tests and stopped after them:
 * upstreams on 127.0.0.1 are allowed, and background health checks and scheduled discovery are off, so only the
 * test's requests wait on the rows it holds. `env` adds to that. After each test the holder's transaction is rolled
 * back, so a failed test lets its rows go. Read it through the returned getter (it exists once `beforeAll` has run).
 */
export function heldRowsPlatform(env: Record<string, string> = {}): () => HeldRowsPlatform {
  let made: HeldRowsPlatform | undefined;
  let platform: TestPlatform | undefined;
  let holder: Client | undefined;
  let observer: Client | undefined;
  beforeAll(async () => {
    platform = await startTestPlatform({
      env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_HEALTH_CHECK_SECONDS: '0', MCP_REFRESH_SECONDS: '0', ...env },
    });
    const admin = await adminClient(platform);
    const owner = await newPerson(platform, admin, 'owner');
    const team = await newTeam(admin, owner);
    holder = await databaseOf(platform, { required: true });
    observer = await databaseOf(platform, { required: true });
    made = { platform, admin, owner, team, holder, observer };
  }, 120_000);
  afterEach(async () => {
    await holder?.query('ROLLBACK');
  });
  afterAll(async () => {
    await holder?.end();
    await observer?.end();
    await platform?.stop();
  });
  return () => made!;
}
