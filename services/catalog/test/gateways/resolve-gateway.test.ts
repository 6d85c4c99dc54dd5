import type { GatewayRuntime } from '@platform/proto/gen/platform/catalog/v1/catalog';
import type { ServiceClients } from '@platform/runtime';
import { adminClient, grpcClients, memoryLogger, newPerson, newTeam, startTestPlatform, unique, type ApiClient, type TestPerson, type TestPlatform } from '@platform/test';
import { approveAll, publish, refreshServer, registerServer } from './catalog-setup';
import { startUpstream, type Upstream } from './upstream';

const CREDENTIAL = 'resolve-gateway-upstream-credential-9876';
const PLATFORM_SECRET = 'resolve-gateway-platform-header-5432';
/** The characters of each colliding name the resolve's log line shows (src/domain/gateway-runtime.ts). */
const LOGGED_NAME_CHARS = 200;
const COLLISION_LINE = 'gateway leaves out capabilities whose names another server holds';

/** Exposed names of a resolved server, as `kind:exposedName`. */
const exposed = (runtime: GatewayRuntime, serverId: string) =>
  runtime.servers.find((s) => s.id === serverId)?.capabilities.map((c) => `${c.kind}:${c.exposedName}`) ?? null;

/**
 * ResolveGateway over gRPC, as the /mcp data plane asks it: the gateway's servers in its team's catalog now, in
 * order, with unsealed headers and only approved, unchanged, present capabilities under their exposed names. The names a
 * run-time collision hides are logged, each cut, so a resolve cannot write lines of megabytes.
 */
describe('ResolveGateway', () => {
  // The platform's log, for the line a run-time collision writes.
  const log = memoryLogger('platform');
  let platform: TestPlatform;
  let clients: ServiceClients;
  let admin: ApiClient;
  let owner: TestPerson;
  let team: string;
  const upstreams: Upstream[] = [];
  let a: { id: string; slug: string };
  let b: { id: string; slug: string };
  let upB: Upstream;

  const start = async (offer: Parameters<typeof startUpstream>[0]) => {
    const upstream = await startUpstream(offer);
    upstreams.push(upstream);
    return upstream;
  };
  const createGateway = async (servers: { serverId: string; prefix?: string }[]) => {
    const created = await owner.client.post(`/v1/teams/${team}/gateways`, { slug: unique('gw'), name: 'Gateway', servers });
    if (created.status !== 201) throw new Error(`create gateway failed: ${created.status} ${JSON.stringify(created.body)}`);
    return created.body.data as { id: string; slug: string };
  };

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' }, logger: log.logger });
    clients = grpcClients(platform);
    admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);

    const upA = await start({ tools: { search: 'Search', fetch: 'Fetch', later: 'Later' }, resources: ['docs://a/readme'], prompts: ['summarise'] });
    upB = await start({ tools: { lookup: 'Lookup' }, resources: ['docs://b/readme'] });
    a = await registerServer(owner, team, upA, { authHeaderName: 'X-Upstream-Key', authValue: CREDENTIAL });
    b = await registerServer(owner, team, upB);
    await publish(owner, admin, team, a.id);
    await publish(owner, admin, team, b.id);
    // After approval, A's upstream changes one tool, drops one and adds one: none of those three is exposed.
    upA.offer.tools = { search: 'Search', fetch: 'Fetch, changed upstream', fresh: 'New and unapproved' };
    await refreshServer(owner, team, a.id);
  }, 120_000);
  afterAll(async () => {
    await clients?.close();
    await platform?.stop();
    await Promise.all(upstreams.map((u) => u.close()));
  });

  it('returns the servers in gateway order with unsealed headers and only approved, unchanged, present capabilities', async () => {
    const draft = await registerServer(owner, team, await start({ tools: { drafted: 'x' } }));
    const disabled = await registerServer(owner, team, await start({ tools: { off: 'x' } }), { enabled: false });
    await publish(owner, admin, team, disabled.id);
    const gateway = await createGateway([{ serverId: b.id, prefix: 'bee' }, { serverId: draft.id }, { serverId: a.id }, { serverId: disabled.id }]);

    const runtime = await clients.catalog.resolveGateway({ slug: gateway.slug });
    expect(runtime.gateway).toMatchObject({ id: gateway.id, slug: gateway.slug, enabled: true });
    // The configured list, all four, in order; the runtime list only what is in the catalog now.
    expect(runtime.gateway!.servers.map((s) => [s.serverId, s.prefix])).toEqual([
      [b.id, 'bee'],
      [draft.id, draft.slug],
      [a.id, a.slug],
      [disabled.id, disabled.slug],
    ]);
    expect(runtime.servers.map((s) => s.id)).toEqual([b.id, a.id]);

    const [first, second] = runtime.servers;
    expect(first).toMatchObject({ slug: b.slug, prefix: 'bee', transport: 'streamable-http', timeoutSeconds: 5, sendIdentity: false, capturePayloads: false, headers: {} });
    expect(second!.headers).toEqual({ 'X-Upstream-Key': CREDENTIAL });
    expect(second!.url).toBe(upstreams[0]!.url);
    // Only this internal answer carries the credential; the gateway's API view never does.
    expect(JSON.stringify((await owner.client.get(`/v1/teams/${team}/gateways/${gateway.id}`)).body)).not.toContain(CREDENTIAL);

    expect(exposed(runtime, b.id)).toEqual(['tool:bee__lookup', 'resource:docs://b/readme']);
    expect(exposed(runtime, a.id)).toEqual([`tool:${a.slug}__search`, 'resource:docs://a/readme', `prompt:${a.slug}__summarise`]);
    const search = second!.capabilities[0]!;
    expect(search.name).toBe('search');
    expect(JSON.parse(search.definitionJson)).toMatchObject({ name: 'search', description: 'Search', inputSchema: { type: 'object' } });
    const listed = await owner.client.get(`/v1/teams/${team}/mcp-servers/${a.id}/capabilities`);
    expect(search.fingerprint).toBe(listed.body.data.find((c: { kind: string; name: string }) => c.kind === 'tool' && c.name === 'search').fingerprint);
  });

  it('drops a server that leaves the catalog (rejected after publication)', async () => {
    const leaving = await registerServer(owner, team, await start({ tools: { leaving: 'Leaving' } }));
    await publish(owner, admin, team, leaving.id);
    const gateway = await createGateway([{ serverId: leaving.id }, { serverId: b.id }]);
    expect((await clients.catalog.resolveGateway({ slug: gateway.slug })).servers.map((s) => s.id)).toEqual([leaving.id, b.id]);
    expect((await admin.post(`/v1/admin/mcp-servers/${leaving.id}/review`, { decision: 'reject' })).status).toBe(200);
    expect((await clients.catalog.resolveGateway({ slug: gateway.slug })).servers.map((s) => s.id)).toEqual([b.id]);
  });

  it('gives a name that collides at run time to the capability approved first, whatever the gateway order, and leaves the other out', async () => {
    // Configured while the names were distinct (both without prefix); B then gains an approved `search` and `summarise`.
    const aFirst = await createGateway([{ serverId: a.id, prefix: '' }, { serverId: b.id, prefix: '' }]);
    const bFirst = await createGateway([{ serverId: b.id, prefix: '' }, { serverId: a.id, prefix: '' }]);
    const original = { ...upB.offer };
    upB.offer.tools = { lookup: 'Lookup', search: 'B search' };
    upB.offer.prompts = ['summarise'];
    try {
      await refreshServer(owner, team, b.id);
      await approveAll(owner, admin, team, b.id);

      // A's, approved at publication, keep their names in both gateways: B's later approval takes nothing from them.
      for (const gateway of [aFirst, bFirst]) {
        const runtime = await clients.catalog.resolveGateway({ slug: gateway.slug });
        expect(exposed(runtime, a.id)).toEqual(['tool:search', 'resource:docs://a/readme', 'prompt:summarise']);
        expect(exposed(runtime, b.id)).toEqual(['tool:lookup', 'resource:docs://b/readme']);
        const search = runtime.servers.find((s) => s.id === a.id)!.capabilities[0]!;
        expect(JSON.parse(search.definitionJson).description).toBe('Search');
        // The approval times go to the data plane too (it orders resource templates by them): A was published first.
        const lookup = runtime.servers.find((s) => s.id === b.id)!.capabilities[0]!;
        expect(Date.parse(search.approvedAt!)).toBeLessThanOrEqual(Date.parse(lookup.approvedAt!));
      }
    } finally {
      Object.assign(upB.offer, original);
      await refreshServer(owner, team, b.id);
    }
  });

  it('logs the names a run-time collision hides, each cut (names come from upstreams, of any length)', async () => {
    // A resource's exposed name is its URI, as long as the upstream makes it.
    const longUri = `docs://shared/${'n'.repeat(1_000)}`;
    const upFirst = await start({ resources: [longUri] });
    const upLater = await start({ tools: { other: 'Other' } });
    const first = await registerServer(owner, team, upFirst);
    const later = await registerServer(owner, team, upLater);
    await publish(owner, admin, team, first.id);
    await publish(owner, admin, team, later.id);
    const gateway = await createGateway([{ serverId: first.id }, { serverId: later.id }]);

    // The later server gains the same URI, approved after the first's: at run time it collides and is left out.
    upLater.offer.resources = [longUri];
    await refreshServer(owner, team, later.id);
    await approveAll(owner, admin, team, later.id);
    const runtime = await clients.catalog.resolveGateway({ slug: gateway.slug });
    expect(runtime.servers.find((server) => server.id === later.id)!.capabilities.map((c) => c.exposedName)).toEqual([`${later.slug}__other`]);

    const line = log.lines.find((each) => each.msg === COLLISION_LINE && each.gateway === gateway.slug);
    expect(line).toMatchObject({ count: 1, hidden: [`resource URI '${longUri}'`.slice(0, LOGGED_NAME_CHARS)] });
  });

  it('includes a platform server only while it is offered to the gateway\'s team, with its further headers unsealed', async () => {
    const upstream = await start({ tools: { weather: 'Weather' } });
    const registered = await admin.post('/v1/teams/platform/mcp-servers', { name: 'Weather', slug: unique('weather'), url: upstream.url, timeoutSeconds: 5 });
    expect(registered.status).toBe(201);
    const server = registered.body.data as { id: string; slug: string; teamId: string };
    expect((await admin.post(`/v1/teams/platform/mcp-servers/${server.id}/refresh`)).status).toBe(200);
    const published = await admin.post(`/v1/teams/platform/mcp-servers/${server.id}/publish`, {});
    expect(published.body.data.publishState).toBe('published');
    const offer = async (body: Record<string, unknown>) => {
      const current = await admin.get(`/v1/admin/mcp-servers/${server.id}`);
      const changed = await admin.patch(`/v1/admin/mcp-servers/${server.id}`, body, { 'if-match': `"${current.body.data.revision}"` });
      expect(changed.status).toBe(200);
    };
    await offer({ visibility: 'teams', teams: [team], headers: { 'X-Platform-Key': PLATFORM_SECRET } });

    // Another team is not offered it: the same answer as for an unknown server.
    const outsider = await newPerson(platform, admin, 'outsider');
    const otherTeam = await newTeam(admin, outsider);
    const refused = await outsider.client.post(`/v1/teams/${otherTeam}/gateways`, { slug: unique('gw'), name: 'x', servers: [{ serverId: server.id }] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.fields.map((f: { field: string }) => f.field)).toEqual(['servers.0.serverId']);

    const gateway = await createGateway([{ serverId: b.id }, { serverId: server.id }]);
    const runtime = await clients.catalog.resolveGateway({ slug: gateway.slug });
    expect(runtime.servers.map((s) => s.id)).toEqual([b.id, server.id]);
    expect(runtime.servers[1]).toMatchObject({ teamId: server.teamId, headers: { 'X-Platform-Key': PLATFORM_SECRET } });
    expect(exposed(runtime, server.id)).toEqual([`tool:${server.slug}__weather`]);

    await offer({ teams: [otherTeam] });
    expect((await clients.catalog.resolveGateway({ slug: gateway.slug })).servers.map((s) => s.id)).toEqual([b.id]);
  });

  it('resolves a disabled gateway too (access is the data plane\'s check) and answers NOT_FOUND for an unknown slug', async () => {
    const off = await owner.client.post(`/v1/teams/${team}/gateways`, { slug: unique('off'), name: 'Off', enabled: false, servers: [{ serverId: b.id }] });
    expect(off.status).toBe(201);
    const runtime = await clients.catalog.resolveGateway({ slug: off.body.data.slug });
    expect(runtime.gateway!.enabled).toBe(false);
    expect(runtime.servers.map((s) => s.id)).toEqual([b.id]);

    await expect(clients.catalog.resolveGateway({ slug: unique('unknown') })).rejects.toMatchObject({ code: 'not_found' });
    await expect(clients.catalog.resolveGateway({ slug: 'Not A Slug' })).rejects.toMatchObject({ code: 'not_found' });
  });
});
