import { ActorKind } from '@platform/proto/gen/platform/common/v1/common';
import { adminClient, eventually, grpcClients, newPerson, newTeam, startTestPlatform, unique, type TestPerson, type TestPlatform } from '@platform/test';
import { startControllableUpstream, UPSTREAM_SECRET_TEXT, type ControllableUpstream } from './controllable-upstream';
import { consumeCatalogEvents, type CatalogEvents } from './events';

const CREDENTIAL = 'health-check-credential-value-5678';

interface HealthJson {
  status: string;
  checkedAt: string | null;
  statusSince: string | null;
  latencyMs: number | null;
  errorClass: string | null;
  message: string | null;
  signInRequired: boolean;
}

/**
 * Periodic health checks, the server.unhealthy / server.healthy events and scheduled re-discovery (issue 5, spec
 * §2.3 `health`, §6.2), through the edge against real SDK upstreams, with checks and discovery every second.
 */
describe('MCP server health checks and scheduled discovery', () => {
  let platform: TestPlatform;
  let owner: TestPerson;
  let team: string;
  let events: CatalogEvents;
  const upstreams: ControllableUpstream[] = [];

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_HEALTH_CHECK_SECONDS: '1', MCP_REFRESH_SECONDS: '1' } });
    const admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
    events = await consumeCatalogEvents(platform);
  }, 120_000);
  afterAll(async () => {
    await events?.close();
    await platform?.stop();
    for (const upstream of upstreams) await upstream.close();
  });

  async function upstream(tools?: string[]): Promise<ControllableUpstream> {
    const started = await startControllableUpstream(tools);
    upstreams.push(started);
    return started;
  }

  async function register(url: string, extra: Record<string, unknown> = {}): Promise<{ id: string; teamId: string; slug: string; name: string }> {
    const slug = unique('srv');
    const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: `Server ${slug}`, slug, url, timeoutSeconds: 5, ...extra });
    expect(created.status).toBe(201);
    expect(created.body.data.health).toEqual({
      status: 'unknown',
      checkedAt: null,
      statusSince: null,
      latencyMs: null,
      errorClass: null,
      message: null,
      signInRequired: false,
    });
    return created.body.data;
  }

  const healthOf = async (serverId: string): Promise<HealthJson> => (await owner.client.get(`/v1/teams/${team}/mcp-servers/${serverId}`)).body.data.health;
  const healthWhen = (serverId: string, check: (health: HealthJson) => boolean) => eventually(() => healthOf(serverId), check);

  it('checks a server, records healthy with the ping latency, and goes unhealthy then healthy again with one event each', async () => {
    const live = await upstream();
    const server = await register(live.url);

    const healthy = await healthWhen(server.id, (health) => health.status === 'healthy');
    expect(healthy).toEqual({
      status: 'healthy',
      checkedAt: expect.any(String),
      statusSince: expect.any(String),
      latencyMs: expect.any(Number),
      errorClass: null,
      message: null,
      signInRequired: false,
    });
    expect(Number.isInteger(healthy.latencyMs) && healthy.latencyMs! >= 0).toBe(true);
    expect(live.pings).toBeGreaterThan(0);

    // stop() closes the listener and destroys the open sockets: a check started after it is refused, but one in
    // flight then (checks run every second) fails on its broken connection instead, as `unreachable`. So the first
    // unhealthy check is one of exactly those two; every later one is refused.
    const stoppedClasses = ['connection_refused', 'unreachable'];
    await live.stop();
    const down = await healthWhen(server.id, (health) => health.status === 'unhealthy');
    expect(stoppedClasses).toContain(down.errorClass);
    expect(down).toMatchObject({ message: `The MCP server could not be reached: ${down.errorClass}`, latencyMs: null, signInRequired: false });
    expect(Date.parse(down.statusSince!)).toBeGreaterThan(Date.parse(healthy.statusSince!));

    // A later failing check, refused, keeps the status and its start.
    const again = await healthWhen(server.id, (health) => Date.parse(health.checkedAt!) > Date.parse(down.checkedAt!) && health.errorClass === 'connection_refused');
    expect(again).toMatchObject({
      status: 'unhealthy',
      statusSince: down.statusSince,
      errorClass: 'connection_refused',
      message: 'The MCP server could not be reached: connection_refused',
      latencyMs: null,
    });

    await live.restart();
    const back = await healthWhen(server.id, (health) => health.status === 'healthy');
    expect(Date.parse(back.statusSince!)).toBeGreaterThan(Date.parse(down.statusSince!));

    // One server's events arrive in order: once server.healthy is here, every earlier event of the server is too.
    await eventually(() => events.of(server.id).map((event) => event.type), (types) => types.includes('server.healthy'));
    const received = events.of(server.id);
    expect(received.map((event) => event.type)).toEqual(['server.unhealthy', 'server.healthy']);
    // The event carries the class of the check that found the server down (the first unhealthy one).
    expect(stoppedClasses).toContain(received[0]!.data.errorClass);
    expect(received[0]!.data).toEqual({
      serverId: server.id,
      teamId: server.teamId,
      slug: server.slug,
      name: server.name,
      errorClass: received[0]!.data.errorClass,
      statusSince: down.statusSince,
    });
    expect(received[1]!.data).toMatchObject({ serverId: server.id, errorClass: null, statusSince: back.statusSince });
  });

  it('forgets the health measured at the old address when the URL changes, then checks the new one', async () => {
    const old = await upstream();
    const server = await register(old.url);
    await healthWhen(server.id, (health) => health.status === 'healthy');
    await old.stop();
    await healthWhen(server.id, (health) => health.status === 'unhealthy');

    const moved = await upstream();
    const current = (await owner.client.get(`/v1/teams/${team}/mcp-servers/${server.id}`)).body.data;
    const changed = await owner.client.patch(`/v1/teams/${team}/mcp-servers/${server.id}`, { url: moved.url }, { 'if-match': `"${current.revision}"` });
    expect(changed.status).toBe(200);
    expect(changed.body.data.health).toMatchObject({ status: 'unknown', checkedAt: null, errorClass: null, latencyMs: null, message: null });
    await healthWhen(server.id, (health) => health.status === 'healthy');

    // A change that keeps the address keeps the health.
    const again = (await owner.client.get(`/v1/teams/${team}/mcp-servers/${server.id}`)).body.data;
    const renamed = await owner.client.patch(`/v1/teams/${team}/mcp-servers/${server.id}`, { name: 'Renamed' }, { 'if-match': `"${again.revision}"` });
    expect(renamed.body.data.health).toMatchObject({ status: 'healthy', statusSince: again.health.statusSince });
  });

  it('forgets the health measured with the old credential when the credential changes, and still announces the recovery', async () => {
    const refusing = await upstream();
    refusing.mode = 'unauthorized';
    const server = await register(refusing.url, { authValue: 'rejected-credential' });
    const path = `/v1/teams/${team}/mcp-servers/${server.id}`;
    await healthWhen(server.id, (health) => health.status === 'unhealthy' && health.signInRequired === true);
    const rekey = async (authValue: string) => {
      const current = (await owner.client.get(path)).body.data;
      const rekeyed = await owner.client.patch(path, { authValue }, { 'if-match': `"${current.revision}"` });
      expect(rekeyed.status).toBe(200);
      return rekeyed.body.data.health as HealthJson;
    };

    // Another credential the upstream also refuses: the health is forgotten, then found down again, by a check that
    // sent the new credential.
    const asked = refusing.requestCredentials.length;
    expect(await rekey('also-rejected-credential')).toMatchObject({ status: 'unknown', checkedAt: null });
    await healthWhen(server.id, (health) => health.status === 'unhealthy');
    expect(refusing.requestCredentials.slice(asked)).toContain('also-rejected-credential');

    refusing.mode = 'serve';
    expect(await rekey('accepted-credential')).toMatchObject({ status: 'unknown', checkedAt: null, errorClass: null, signInRequired: false, message: null });
    await healthWhen(server.id, (health) => health.status === 'healthy');
    expect(refusing.pingCredentials.at(-1)).toBe('accepted-credential');

    // The events follow what was announced: down once (not again after the first reset), then back up, although
    // each reset put the stored status to unknown in between.
    await eventually(() => events.of(server.id).map((event) => event.type), (types) => types.includes('server.healthy'));
    expect(events.of(server.id).map((event) => event.type)).toEqual(['server.unhealthy', 'server.healthy']);
  });

  it('classes an upstream that never answers as a timeout', async () => {
    const hanging = await upstream();
    hanging.mode = 'hang';
    const server = await register(hanging.url, { timeoutSeconds: 1 });
    const health = await healthWhen(server.id, (value) => value.status === 'unhealthy');
    expect(health).toMatchObject({ errorClass: 'timeout', message: 'The MCP server could not be reached: timeout', signInRequired: false });
    await eventually(() => events.of(server.id).map((event) => event.type), (types) => types.includes('server.unhealthy'));
    expect(events.of(server.id)[0]!.data).toMatchObject({ errorClass: 'timeout' });
  });

  it('marks sign-in required when the upstream answers 401, without its words or the credential', async () => {
    const refusing = await upstream();
    refusing.mode = 'unauthorized';
    const server = await register(refusing.url, { authHeaderName: 'X-Api-Key', authValue: CREDENTIAL });
    const health = await healthWhen(server.id, (value) => value.status === 'unhealthy');
    expect(health).toMatchObject({ errorClass: 'http_error', signInRequired: true, message: 'The MCP server refused the credentials (HTTP 401)' });
    const shown = JSON.stringify((await owner.client.get(`/v1/teams/${team}/mcp-servers/${server.id}`)).body);
    expect(shown).not.toContain(UPSTREAM_SECRET_TEXT);
    expect(shown).not.toContain(CREDENTIAL);
  });

  it('re-discovers on schedule as the system: a new upstream tool appears without a refresh', async () => {
    const changing = await upstream(['echo']);
    const server = await register(changing.url);
    changing.tools = ['echo', 'added'];
    const names = await eventually(
      async () => ((await owner.client.get(`/v1/teams/${team}/mcp-servers/${server.id}/capabilities`)).body.data as { kind: string; name: string }[]).map((item) => `${item.kind}:${item.name}`),
      (items) => items.includes('tool:added'),
    );
    expect(names).toEqual(['tool:added', 'tool:echo']);
    const entry = await eventually(
      async () =>
        ((await owner.client.get(`/v1/teams/${team}/audit?action=mcp_server.refresh`)).body.data ?? []).find(
          (item: { targetId: string }) => item.targetId === server.id,
        ),
      'a scheduled mcp_server.refresh audit entry',
    );
    expect(entry.actor.kind).toBe('system');
    expect(entry.metadata).toMatchObject({ outcome: 'succeeded' });
  });

  it('lets a system caller refresh over gRPC and never runs two discoveries of one server at once', async () => {
    const gated = await upstream(['echo']);
    // Disabled, so neither checker nor scheduler touches it: only the calls below discover.
    const server = await register(gated.url, { timeoutSeconds: 30, enabled: false });
    gated.holdToolsList = true;
    const clients = grpcClients(platform);
    const context = {
      requestId: '',
      actor: { kind: ActorKind.ACTOR_KIND_SYSTEM, userId: '', displayName: 'MCP gateway', email: '', apiKeyName: '', serviceAccountId: '' },
      clientIp: '',
      viaKind: 'mcp_gateway',
      viaName: 'test',
    };
    let settled = 0;
    const calls = Array.from({ length: 4 }, () =>
      clients.catalog.refreshMcpServer({ context, teamId: server.teamId, serverId: server.id }).finally(() => settled++),
    );

    // One discovery waits at the upstream; the three other refreshes were coalesced into it and answered at once.
    await eventually(() => ({ pending: gated.pendingToolsList, settled }), (state) => state.pending === 1 && state.settled === 3);

    gated.openToolsList();
    const answers = await Promise.all(calls);
    expect(gated.maxPendingToolsList).toBe(1);
    // The coalesced requests were honoured by exactly one further round, after the one they waited on.
    expect(gated.toolsLists).toBe(2);
    expect(answers.map((answer) => [answer.coalesced, answer.capabilities.length]).sort()).toEqual([
      [false, 1],
      [true, 0],
      [true, 0],
      [true, 0],
    ]);
    const entries = await eventually(
      async () =>
        ((await owner.client.get(`/v1/teams/${team}/audit?action=mcp_server.refresh`)).body.data ?? []).filter(
          (item: { targetId: string }) => item.targetId === server.id,
        ) as { actor: { kind: string }; via?: { kind: string; name: string } }[],
      (items) => items.length === 2,
    );
    expect(entries.map((entry) => entry.actor.kind)).toEqual(['system', 'system']);
    expect(entries.map((entry) => entry.via?.kind ?? null).sort()).toEqual(['mcp_gateway', null].sort());
  });

  it("answers a refresh with its own stored discovery when the repeat others asked for fails", async () => {
    const gated = await upstream(['echo']);
    const server = await register(gated.url, { timeoutSeconds: 30, enabled: false });
    const path = `/v1/teams/${team}/mcp-servers/${server.id}`;
    gated.holdToolsList = true;
    const first = owner.client.post(`${path}/refresh`);
    await eventually(() => gated.pendingToolsList, (pending) => pending === 1);
    // Coalesced into the running discovery: answered at once, saying so (202), and owed one more round once it ends.
    expect((await owner.client.post(`${path}/refresh`)).status).toBe(202);

    // That repeat will find the upstream refusing; the held tools/list is already past the refusal.
    gated.mode = 'unauthorized';
    gated.openToolsList();
    const answered = await first;
    expect([answered.status, answered.body.data?.map((item: { name: string }) => item.name)]).toEqual([200, ['echo']]);
    // The repeat's failure is on the server (its last refresh) and in the audit log as the system's, not the caller's.
    expect((await owner.client.get(path)).body.data.lastRefreshError).toContain('http_error');
    const entries = await eventually(
      async () =>
        ((await owner.client.get(`/v1/teams/${team}/audit?action=mcp_server.refresh`)).body.data ?? []).filter(
          (item: { targetId: string }) => item.targetId === server.id,
        ) as { actor: { kind: string }; metadata: { outcome: string } }[],
      (items) => items.length === 2,
    );
    expect(entries.map((entry) => [entry.actor.kind, entry.metadata.outcome]).sort()).toEqual([
      ['system', 'failed'],
      ['user', 'succeeded'],
    ]);
  });
});
