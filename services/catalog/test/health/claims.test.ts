import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPostgresDatabase, loadSecrets, type Database } from '@platform/runtime';
import { adminClient, describeWith, eventually, newPerson, newTeam, startTestPlatform, unique, type TestPerson, type TestPlatform } from '@platform/test';
import { healthChecker } from '../../src/domain/health-checker';
import type { HealthDeps } from '../../src/domain/health';
import { startControllableUpstream, type ControllableUpstream } from './controllable-upstream';

/**
 * Replicas share the checks: two checkers (each with its own connection pool, as two catalog replicas have) claim
 * due servers with SKIP LOCKED. The platform's own checker is off (0) so only these two run.
 */
describeWith('postgres', 'health check claims across replicas', () => {
  let platform: TestPlatform;
  let owner: TestPerson;
  let team: string;
  const upstreams: ControllableUpstream[] = [];
  const databases: Database[] = [];
  const dataDir = mkdtempSync(path.join(tmpdir(), 'health-claims-'));

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' } });
    const admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
  }, 120_000);
  afterAll(async () => {
    for (const database of databases) await database.close();
    await platform?.stop();
    for (const upstream of upstreams) await upstream.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** What one catalog replica's checker works with: its own pool on the platform's database, checks hourly. */
  async function replicaDeps(): Promise<HealthDeps> {
    const { config, logger } = platform.platform.context;
    const db = createPostgresDatabase({ url: platform.env.DATABASE_URL!, poolMax: 3, logger });
    databases.push(db);
    // Open the pool's connections now, so the two checkers' claims really overlap.
    await Promise.all([1, 2, 3].map(() => db.query('SELECT pg_sleep(0.05)')));
    const secrets = await loadSecrets({ encryptionKey: platform.env.ENCRYPTION_KEY, apiKeyPepper: platform.env.API_KEY_PEPPER, dataDir, embedded: false, logger });
    return { db, logger, secrets, config: { ...config, env: { ...config.env, MCP_HEALTH_CHECK_SECONDS: 3600 } } };
  }

  async function register(url: string, timeoutSeconds = 5): Promise<string> {
    const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: 'Checked', slug: unique('chk'), url, timeoutSeconds });
    expect(created.status).toBe(201);
    return created.body.data.id;
  }

  const healthOf = async (serverId: string) => (await owner.client.get(`/v1/teams/${team}/mcp-servers/${serverId}`)).body.data.health;

  it('two concurrent checkers check every due server exactly once, and none again before the interval', async () => {
    const ids: string[] = [];
    for (let index = 0; index < 8; index++) {
      const upstream = await startControllableUpstream();
      upstreams.push(upstream);
      ids.push(await register(upstream.url));
    }
    const first = healthChecker(await replicaDeps())!;
    const second = healthChecker(await replicaDeps())!;

    const counts = await Promise.all([first.runRound(), second.runRound()]);
    expect(counts[0] + counts[1]).toBe(8);
    expect(upstreams.map((upstream) => upstream.pings)).toEqual(Array(8).fill(1));
    for (const id of ids) expect((await healthOf(id)).status).toBe('healthy');

    // Claimed servers are due again only an interval later.
    expect(await Promise.all([first.runRound(), second.runRound()])).toEqual([0, 0]);
    expect(upstreams.map((upstream) => upstream.pings)).toEqual(Array(8).fill(1));
  });

  it('stores nothing from a check of an address the server left while the check ran', async () => {
    const old = await startControllableUpstream();
    const gone = await startControllableUpstream();
    upstreams.push(old, gone);
    // Nothing listens at the new address: a check there is unhealthy, a stale one of the old address healthy.
    await gone.stop();
    old.holdPing = true;
    const id = await register(old.url, 30);
    const first = healthChecker(await replicaDeps())!;
    const second = healthChecker(await replicaDeps())!;

    // The first replica claims the server and waits at the old address's ping.
    const stale = first.runRound();
    await eventually(() => old.pendingPings, (pending) => pending === 1);
    const moved = await owner.client.patch(`/v1/teams/${team}/mcp-servers/${id}`, { url: gone.url }, { 'if-match': '"1"' });
    expect(moved.status).toBe(200);
    expect(moved.body.data.health.status).toBe('unknown');
    // The move made the server due at once: the second replica checks the new address.
    await second.runRound();
    const checked = await healthOf(id);
    expect(checked).toMatchObject({ status: 'unhealthy', errorClass: 'connection_refused' });

    // The old address answers now; its check ends, and what it found is not stored against the new address.
    old.openPings();
    await stale;
    expect(old.pings).toBe(1);
    expect(await healthOf(id)).toEqual(checked);
  });

  it('stores nothing from a check made with a credential the server no longer has', async () => {
    const upstream = await startControllableUpstream();
    upstreams.push(upstream);
    upstream.holdPing = true;
    const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, {
      name: 'Rekeyed',
      slug: unique('rk'),
      url: upstream.url,
      authValue: 'old-credential',
      timeoutSeconds: 30,
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    const first = healthChecker(await replicaDeps())!;
    const second = healthChecker(await replicaDeps())!;

    // The first replica's check waits at the ping it sent with the old credential.
    const stale = first.runRound();
    await eventually(() => upstream.pendingPings, (pending) => pending === 1);
    // The upstream now refuses everyone but the new credential's holder: the stale check would store healthy.
    const rekeyed = await owner.client.patch(`/v1/teams/${team}/mcp-servers/${id}`, { authValue: 'new-credential' }, { 'if-match': '"1"' });
    expect(rekeyed.status).toBe(200);
    expect(rekeyed.body.data.health.status).toBe('unknown');
    upstream.mode = 'unauthorized';
    await second.runRound();
    const checked = await healthOf(id);
    expect(checked).toMatchObject({ status: 'unhealthy', signInRequired: true });

    upstream.openPings();
    await stale;
    expect(upstream.pingCredentials).toEqual(['old-credential']);
    expect(await healthOf(id)).toEqual(checked);
  });

  it("forgets the health when a platform admin replaces the server's headers (op 16), not when only its name changes", async () => {
    const admin = await adminClient(platform);
    const platformAdmin = await newPerson(platform, admin, 'platform-admin', 'admin');
    const upstream = await startControllableUpstream();
    upstreams.push(upstream);
    const id = await register(upstream.url);
    const checker = healthChecker(await replicaDeps())!;
    expect(await checker.runRound()).toBe(1);
    const healthy = await healthOf(id);
    expect(healthy.status).toBe('healthy');

    const adminPath = `/v1/admin/mcp-servers/${id}`;
    const change = async (body: Record<string, unknown>) => {
      const current = (await platformAdmin.client.get(adminPath)).body.data;
      expect((await platformAdmin.client.patch(adminPath, body, { 'if-match': `"${current.revision}"` })).status).toBe(200);
    };
    await change({ name: 'Renamed by the platform' });
    expect(await healthOf(id)).toEqual(healthy);
    expect(await checker.runRound()).toBe(0);

    // Headers are part of the connection: what was measured without them says nothing of the server with them.
    await change({ headers: { Authorization: 'platform-credential' } });
    expect(await healthOf(id)).toMatchObject({ status: 'unknown', checkedAt: null });
    expect(await checker.runRound()).toBe(1);
    expect(await healthOf(id)).toMatchObject({ status: 'healthy' });
    expect(upstream.pingCredentials).toEqual(['', 'platform-credential']);
  });

  it('stops cleanly: an in-flight check is aborted and records nothing', async () => {
    const hanging = await startControllableUpstream();
    upstreams.push(hanging);
    hanging.mode = 'hang';
    // A timeout far beyond this test's own: only the abort can end the check in time.
    const id = await register(hanging.url, 120);
    const checker = healthChecker(await replicaDeps())!;
    checker.start();
    await eventually(() => hanging.requests, (requests) => requests > 0);
    await checker.stop();
    expect((await healthOf(id)).status).toBe('unknown');
  });
});
