import { DatabaseUnavailableError, systemRequestContext } from '@platform/runtime';
import {
  adminClient,
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
import type { CatalogDeps } from '../../src/deps';
import { refreshMcpServer } from '../../src/domain/capabilities';
import { RefreshLeases, RefreshLeaseLost } from '../../src/domain/refresh-leases';
import { startControllableUpstream, type ControllableUpstream } from '../health/controllable-upstream';
import { startRelayedReplica, type RelayedReplica } from './relayed-replica';

/** What the catalog's gRPC server logs when a call meets a dependency outage (runtime grpc/server.ts). */
const OUTAGE_LINE = 'gRPC handler met a dependency outage';
/** What a refresh logs when another refresh took its lease over: not an outage. */
const SUPERSEDED_LINE = 'refresh superseded: another refresh took its lease over and discovers the server';

/**
 * The refresh lease when the catalog's database fails mid-refresh (docs/catalog.md, One discovery of a server at a
 * time). Replica A is a catalog built here whose pool reaches the platform's database through a relay the test cuts;
 * replica B is the platform's own catalog, behind the refresh route, whose database stays reachable.
 */
describeWith('postgres', 'the refresh lease when the catalog database fails mid-refresh', () => {
  const log = memoryLogger('catalog');
  /** The platform's log: replica B's, with its gRPC server's. */
  const platformLog = memoryLogger('platform');
  let platform: TestPlatform;
  let replica: RelayedReplica;
  let relay: TcpProxy;
  let replicaA: CatalogDeps;
  let owner: TestPerson;
  let team: string;
  let teamId: string;
  const upstreams: ControllableUpstream[] = [];

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' }, logger: platformLog.logger });
    const admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
    teamId = (await owner.client.get(`/v1/teams/${team}`)).body.data.id;
    replica = await startRelayedReplica(platform, log.logger, { poolMax: 3 });
    ({ relay, deps: replicaA } = replica);
  }, 120_000);

  afterAll(async () => {
    await replica?.close();
    await platform?.stop();
    for (const upstream of upstreams) await upstream.close();
  });

  /** A disabled server (neither health checks nor the scheduler touch it) at an upstream listing `search`. */
  async function heldServer(timeoutSeconds = 5): Promise<{ upstream: ControllableUpstream; serverId: string }> {
    const upstream = await startControllableUpstream(['search']);
    upstreams.push(upstream);
    const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: 'Leased', slug: unique('lease'), url: upstream.url, timeoutSeconds, enabled: false });
    expect(created.status).toBe(201);
    upstream.holdToolsList = true;
    return { upstream, serverId: created.body.data.id };
  }

  const refreshOn = (replica: CatalogDeps, serverId: string) => refreshMcpServer(replica, { context: systemRequestContext('system', 'test'), teamId, serverId });
  const refreshOnA = (serverId: string) => refreshOn(replicaA, serverId);
  const refreshOnB = (serverId: string) => owner.client.post(`/v1/teams/${team}/mcp-servers/${serverId}/refresh`);
  const names = (answer: { capabilities: { name: string }[] }) => answer.capabilities.map((item) => item.name);
  /** As when a holder's statements stalled past its lease and another replica took the server over. */
  const takeLeaseOver = (serverId: string) => replicaA.db.query(`UPDATE catalog.mcp_servers SET refresh_lease_token = gen_random_uuid() WHERE id = $1`, [serverId]);
  const loggedSince = (from: number, message: string) => platformLog.lines.slice(from).filter((line) => line.msg === message);

  /** Replica A's refresh of the server fails for its database going away while the discovery waits upstream. */
  async function refreshCutOffMidway(upstream: ControllableUpstream, serverId: string): Promise<void> {
    const failed = refreshOnA(serverId);
    await eventually(() => upstream.pendingToolsList, (pending) => pending === 1);
    relay.cut();
    upstream.openToolsList();
    await expect(failed).rejects.toBeInstanceOf(DatabaseUnavailableError);
    relay.restore();
  }

  it('merges a refresh asked of another replica into a live one, says so (202), and the live one discovers once more', async () => {
    const { upstream, serverId } = await heldServer();
    const running = refreshOnA(serverId);
    await eventually(() => upstream.pendingToolsList, (pending) => pending === 1);
    const merged = await refreshOnB(serverId);
    expect([merged.status, merged.body.data]).toEqual([202, []]);
    upstream.openToolsList();
    expect(names(await running)).toEqual(['search']);
    expect(upstream.toolsLists).toBe(2);
    expect(upstream.maxPendingToolsList).toBe(1);
  }, 60_000);

  it('stores nothing from a round whose lease another refresh took over meanwhile (a fence under the row lock), and answers it as merged, not as an outage', async () => {
    const { upstream, serverId } = await heldServer();
    const from = platformLog.lines.length;
    const running = refreshOnB(serverId);
    await eventually(() => upstream.pendingToolsList, (pending) => pending === 1);
    await takeLeaseOver(serverId);
    upstream.openToolsList();
    const answered = await running;
    expect([answered.status, answered.body.data]).toEqual([202, []]);
    expect(loggedSince(from, OUTAGE_LINE)).toEqual([]);
    expect(loggedSince(from, SUPERSEDED_LINE)).toEqual([expect.objectContaining({ level: 'info', serverId })]);
    const stored = await owner.client.get(`/v1/teams/${team}/mcp-servers/${serverId}/capabilities`);
    expect(stored.body.data).toEqual([]);
    expect((await owner.client.get(`/v1/teams/${team}/mcp-servers/${serverId}`)).body.data.refreshedAt).toBeNull();
  }, 60_000);

  it('stops a discovery whose renewal finds the lease taken over, and answers it as merged', async () => {
    // A short term: renewed every 3⅓ s, so the renewal meets the take-over within seconds.
    const shortLeased: CatalogDeps = { ...replicaA, refreshLeases: new RefreshLeases(10) };
    const { upstream, serverId } = await heldServer(60);
    const from = log.lines.length;
    const running = refreshOn(shortLeased, serverId);
    await eventually(() => upstream.pendingToolsList, (pending) => pending === 1);
    await takeLeaseOver(serverId);
    // The upstream never answers: only the renewal ends the discovery.
    expect(await running).toMatchObject({ coalesced: true, capabilities: [] });
    upstream.openToolsList();
    expect(upstream.toolsLists).toBe(1);
    expect(log.lines.slice(from).filter((line) => line.msg === SUPERSEDED_LINE)).toEqual([expect.objectContaining({ level: 'info', serverId })]);
    expect((await owner.client.get(`/v1/teams/${team}/mcp-servers/${serverId}`)).body.data.refreshedAt).toBeNull();
  }, 60_000);

  it('answers 404, not a merge, when the renewal finds no lease because the server was deleted meanwhile', async () => {
    const shortLeased: CatalogDeps = { ...replicaA, refreshLeases: new RefreshLeases(10) };
    const { upstream, serverId } = await heldServer(60);
    const from = log.lines.length;
    const running = refreshOn(shortLeased, serverId).catch((error: unknown) => error);
    await eventually(() => upstream.pendingToolsList, (pending) => pending === 1);
    expect((await owner.client.delete(`/v1/teams/${team}/mcp-servers/${serverId}`)).status).toBe(204);
    // The upstream never answers: only the renewal, which finds no row, ends the discovery.
    expect(await running).toMatchObject({ code: 'not_found' });
    upstream.openToolsList();
    expect(log.lines.slice(from).filter((line) => line.msg === SUPERSEDED_LINE)).toEqual([]);
  }, 60_000);

  it('runs the next refresh on the same replica once the database is back, instead of merging it into the failed one', async () => {
    const { upstream, serverId } = await heldServer();
    await refreshCutOffMidway(upstream, serverId);

    const answer = await refreshOnA(serverId);
    expect(upstream.toolsLists).toBe(2);
    expect(names(answer)).toEqual(['search']);
  }, 60_000);

  it('runs a refresh asked of another replica soon after the database is back', async () => {
    const { upstream, serverId } = await heldServer();
    await refreshCutOffMidway(upstream, serverId);

    // Well within the old lease (max(60 s, 10 × 5 s) + 30 s): the failed holder lets go once the database answers.
    // Its own replica does not hold it for a whole term either (REFRESH_LEASE_SECONDS, 30 s).
    const answered = await eventually(() => refreshOnB(serverId), (response) => response.status !== 202, 15_000);
    expect(upstream.toolsLists).toBe(2);
    expect([answered.status, answered.body.data?.map((item: { name: string }) => item.name)]).toEqual([200, ['search']]);
  }, 60_000);

  it('stops a discovery whose lease it cannot renew before the lease runs out; another replica then refreshes, never at the same time', async () => {
    // A short term, so that the test waits seconds for it to run out: renewed every 3⅓ s, given up after 8⅓ s.
    const shortLeased: CatalogDeps = { ...replicaA, refreshLeases: new RefreshLeases(10) };
    // Its tools/list waits past the lease's term without timing out.
    const { upstream, serverId } = await heldServer(60);
    let listsWhenStopped = -1;
    const stopped = refreshOn(shortLeased, serverId).then(
      () => null,
      (error: unknown) => {
        listsWhenStopped = upstream.toolsLists;
        upstream.openToolsList();
        return error;
      },
    );
    await eventually(() => upstream.pendingToolsList, (pending) => pending === 1);
    relay.cut();

    // The other replica, asked meanwhile: merged (202) while the lease runs, then a discovery of its own (200).
    const statuses: number[] = [];
    const answered = await eventually(
      async () => {
        const response = await refreshOnB(serverId);
        statuses.push(response.status);
        return response;
      },
      (response) => response.status !== 202,
      45_000,
    );
    const error = await stopped;
    expect(error).toBeInstanceOf(RefreshLeaseLost);
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    // Replica A had stopped before replica B's discovery reached the upstream.
    expect(listsWhenStopped).toBe(1);
    expect(statuses[0]).toBe(202);
    expect([answered.status, answered.body.data?.map((item: { name: string }) => item.name)]).toEqual([200, ['search']]);
    expect(upstream.toolsLists).toBe(2);
    relay.restore();
  }, 90_000);
});
