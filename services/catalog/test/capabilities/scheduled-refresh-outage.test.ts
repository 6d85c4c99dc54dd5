import type { Client } from 'pg';
import { DatabaseUnavailableError, type ClaimedRoundsTask } from '@platform/runtime';
import {
  adminClient,
  databaseOf,
  describeWith,
  eventually,
  memoryLogger,
  newPerson,
  newTeam,
  startTestPlatform,
  unique,
  type TcpProxy,
  type TestPerson,
  type TestPlatform,
} from '@platform/test';
import { scheduledRefresh } from '../../src/domain/scheduled-refresh';
import { startControllableUpstream, type ControllableUpstream } from '../health/controllable-upstream';
import { startRelayedReplica, type RelayedReplica } from './relayed-replica';

const OUTAGE_LINE = 'background work failed: the database is unavailable; trying again next round';

/**
 * Scheduled re-discovery whose own database goes away (docs/catalog.md, Health checks and scheduled discovery): the
 * outage is the catalog's, not the upstream's. The scheduler runs as one catalog replica would, with its own pool
 * reaching the platform's database through a relay that cuts every connection; the test reads the server's recorded
 * state through the platform, whose database stays reachable.
 */
describeWith('postgres', 'scheduled re-discovery while the catalog database is away', () => {
  const log = memoryLogger('catalog');
  let platform: TestPlatform;
  let direct: Client;
  let relay: TcpProxy;
  let replica: RelayedReplica;
  let task: ClaimedRoundsTask;
  let upstream: ControllableUpstream;
  let owner: TestPerson;
  let team: string;
  let serverId: string;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' } });
    direct = await databaseOf(platform, { required: true });
    const admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
    upstream = await startControllableUpstream(['search']);
    const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: 'Scheduled', slug: unique('sched'), url: upstream.url, timeoutSeconds: 5 });
    expect(created.status).toBe(201);
    serverId = created.body.data.id;

    replica = await startRelayedReplica(platform, log.logger, {
      poolMax: 2,
      configure: (config) => ({ ...config, env: { ...config.env, MCP_REFRESH_SECONDS: 3600 } }),
    });
    relay = replica.relay;
    task = scheduledRefresh(replica.deps)!;
  }, 120_000);

  afterAll(async () => {
    await replica?.close();
    await direct?.end();
    await platform?.stop();
    await upstream?.close();
  });

  const recorded = async () => {
    const { health, refreshedAt, lastRefreshError } = (await owner.client.get(`/v1/teams/${team}/mcp-servers/${serverId}`)).body.data;
    return { health, refreshedAt, lastRefreshError };
  };
  const logged = (message: string) => log.lines.filter((line) => line.msg === message);

  it('blames nothing on the upstream when the database fails mid-refresh: nothing recorded, the outage logged now and then', async () => {
    await direct.query(`UPDATE catalog.mcp_servers SET next_refresh_at = now() WHERE id = $1`, [serverId]);
    const before = await recorded();
    expect(before.lastRefreshError).toBeNull();

    // The upstream answers; the database goes away while the discovery waits at it.
    upstream.holdToolsList = true;
    const round = task.runRound();
    await eventually(() => upstream.pendingToolsList, (pending) => pending === 1);
    relay.cut();
    upstream.openToolsList();
    // The server's refresh fails for the outage, and so does the round (the next claim meets it too), as every
    // round while it lasts.
    await expect(round).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(task.runRound()).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(task.runRound()).rejects.toBeInstanceOf(DatabaseUnavailableError);

    // Logged once (claimedRounds holds back the repeats), and never as the upstream's failure.
    expect(logged(OUTAGE_LINE)).toEqual([expect.objectContaining({ level: 'warn', task: 'catalog.scheduled-refresh', suppressed: 0 })]);
    expect(logged('MCP server discovery failed')).toEqual([]);
    expect(await recorded()).toEqual(before);
  }, 60_000);

  it('discovers the server at its next schedule once the database answers', async () => {
    relay.restore();
    // One interval later; the refresh lease the failed refresh could not let go is no hindrance (refresh-leases.ts).
    await direct.query(`UPDATE catalog.mcp_servers SET next_refresh_at = now() WHERE id = $1`, [serverId]);
    await expect(task.runRound()).resolves.toBe(1);
    const after = await recorded();
    expect(after.lastRefreshError).toBeNull();
    expect(after.refreshedAt).not.toBeNull();
    const capabilities = (await owner.client.get(`/v1/teams/${team}/mcp-servers/${serverId}/capabilities`)).body.data as { name: string }[];
    expect(capabilities.map((capability) => capability.name)).toEqual(['search']);
  }, 60_000);
});
