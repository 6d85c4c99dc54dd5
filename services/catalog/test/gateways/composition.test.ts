import type { ServiceClients } from '@platform/runtime';
import { adminClient, eventually, grpcClients, newPerson, newTeam, startTestPlatform, unique, type ApiClient, type TestPerson, type TestPlatform } from '@platform/test';
import { registerServer } from './catalog-setup';
import { startUpstream, type Upstream } from './upstream';

interface GatewayJson {
  id: string;
  slug: string;
  name: string;
  enabled: boolean;
  revision: number;
  servers: { serverId: string; slug: string; name: string; prefix: string }[];
}

/**
 * Gateway composition through the real edge (issue 5): a gateway's servers and prefixes, the rules that refuse a
 * configuration whose exposed names would collide, changing (If-Match) and deleting gateways, with audit entries.
 */
describe('gateway composition', () => {
  let platform: TestPlatform;
  let clients: ServiceClients;
  let admin: ApiClient;
  let owner: TestPerson;
  let teamAdmin: TestPerson;
  let member: TestPerson;
  let outsider: TestPerson;
  let team: string;
  let otherTeam: string;
  const upstreams: Upstream[] = [];
  // search + fetch, a resource and a prompt; `twin` offers the same names; `other` and `plain` distinct ones.
  let main: { id: string; slug: string };
  let twin: { id: string; slug: string };
  let other: { id: string; slug: string };
  let plain: { id: string; slug: string };
  let foreign: { id: string; slug: string };

  const start = async (offer: Parameters<typeof startUpstream>[0]) => {
    const upstream = await startUpstream(offer);
    upstreams.push(upstream);
    return upstream;
  };

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' } });
    clients = grpcClients(platform);
    admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    teamAdmin = await newPerson(platform, admin, 'team-admin');
    member = await newPerson(platform, admin, 'member');
    outsider = await newPerson(platform, admin, 'outsider');
    team = await newTeam(admin, owner, [
      [teamAdmin, 'admin'],
      [member, 'member'],
    ]);
    otherTeam = await newTeam(admin, outsider);
    const offer = { tools: { search: 'Search', fetch: 'Fetch' }, resources: ['docs://shared/readme'], prompts: ['summarise'] };
    main = await registerServer(owner, team, await start(offer), { name: 'Main' });
    twin = await registerServer(owner, team, await start(offer), { name: 'Twin' });
    other = await registerServer(owner, team, await start({ tools: { lookup: 'Lookup' }, resources: ['docs://other/readme'] }), { name: 'Other' });
    plain = await registerServer(owner, team, await start({ tools: { status: 'Status' } }), { name: 'Plain' });
    foreign = await registerServer(outsider, otherTeam, await start({ tools: { secret: 'Secret' } }), { name: 'Foreign secret server' });
  }, 120_000);
  afterAll(async () => {
    await clients?.close();
    await platform?.stop();
    await Promise.all(upstreams.map((u) => u.close()));
  });

  const gateways = (teamRef = team) => `/v1/teams/${teamRef}/gateways`;
  const create = async (servers: unknown[], who: TestPerson = owner) => who.client.post(gateways(), { slug: unique('gw'), name: 'Gateway', servers });
  const created = async (servers: unknown[]): Promise<GatewayJson> => {
    const response = await create(servers);
    if (response.status !== 201) throw new Error(`create gateway failed: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body.data;
  };
  const patch = (gateway: { id: string }, body: unknown, revision: number | null, who: TestPerson = owner) =>
    who.client.patch(`${gateways()}/${gateway.id}`, body, revision === null ? {} : { 'if-match': `"${revision}"` });
  const auditEntry = (action: string, gatewayId: string, check: (entry: Record<string, unknown>) => boolean = () => true) =>
    eventually(async () => {
      const page = await owner.client.get(`/v1/teams/${team}/audit?action=${action}`);
      return page.body.data?.find((e: { targetId: string }) => e.targetId === gatewayId && check(e));
    }, `the ${action} audit entry`);
  const fieldsOf = (body: { error: { fields?: { field: string }[] } }) => body.error.fields?.map((f) => f.field) ?? [];

  describe('creating', () => {
    it('keeps the servers in order, each under its prefix (the slug by default, or given, or empty), and audits them', async () => {
      const response = await create([{ serverId: other.id }, { serverId: main.id, prefix: 'main_v2' }, { serverId: plain.id, prefix: '' }]);
      expect(response.status).toBe(201);
      const gateway: GatewayJson = response.body.data;
      expect(gateway.servers).toEqual([
        { serverId: other.id, slug: other.slug, name: 'Other', prefix: other.slug },
        { serverId: main.id, slug: main.slug, name: 'Main', prefix: 'main_v2' },
        { serverId: plain.id, slug: plain.slug, name: 'Plain', prefix: '' },
      ]);
      expect((await member.client.get(`${gateways()}/${gateway.slug}`)).body.data.servers).toEqual(gateway.servers);
      const listed = await member.client.get(gateways());
      expect(listed.body.data.find((g: GatewayJson) => g.id === gateway.id).servers).toEqual(gateway.servers);

      const entry = await auditEntry('gateway.create', gateway.id);
      expect(entry.after).toMatchObject({
        servers: [
          { serverId: other.id, prefix: other.slug },
          { serverId: main.id, prefix: 'main_v2' },
          { serverId: plain.id, prefix: '' },
        ],
      });
    });

    it.each([
      ['uppercase', 'Main'],
      ['a double underscore (the separator)', 'a__b'],
      ['a leading underscore', '_main'],
      ['a trailing hyphen', 'main-'],
      ['a dot', 'main.v2'],
      ['64 characters', 'p'.repeat(64)],
    ])('refuses a prefix with %s (400 naming the field) and creates nothing', async (_label, prefix) => {
      const slug = unique('bad-prefix');
      const response = await owner.client.post(gateways(), { slug, name: 'x', servers: [{ serverId: main.id, prefix }] });
      expect(response.status).toBe(400);
      expect(fieldsOf(response.body)).toEqual(['servers.0.prefix']);
      expect((await owner.client.get(`${gateways()}/${slug}`)).status).toBe(404);
    });

    it('refuses a server named twice, a malformed id and more than 50 servers', async () => {
      const twice = await create([{ serverId: main.id }, { serverId: main.id.toUpperCase(), prefix: 'again' }]);
      expect(twice.status).toBe(400);
      expect(fieldsOf(twice.body)).toEqual(['servers.1.serverId']);
      const malformed = await create([{ serverId: 'not-a-uuid' }]);
      expect(malformed.status).toBe(400);
      expect(fieldsOf(malformed.body)).toEqual(['servers.0.serverId']);
      const many = await create(Array.from({ length: 51 }, () => ({ serverId: main.id })));
      expect(many.status).toBe(400);
      expect(fieldsOf(many.body)).toContain('servers');
      expect((await create([{ serverId: main.id, extra: true }])).status).toBe(400);
    });

    it('refuses another team\'s server exactly as an unknown one, revealing nothing about it', async () => {
      const foreignAnswer = await create([{ serverId: main.id }, { serverId: foreign.id }]);
      const unknownAnswer = await create([{ serverId: main.id }, { serverId: '6f1c2a52-8d8e-4c1e-9d7a-3b2a1c0d9e8f' }]);
      expect(foreignAnswer.status).toBe(400);
      expect(foreignAnswer.body.error.code).toBe('invalid_request');
      expect(fieldsOf(foreignAnswer.body)).toEqual(['servers.1.serverId']);
      expect({ ...foreignAnswer.body.error, requestId: null }).toEqual({ ...unknownAnswer.body.error, requestId: null });
      expect(JSON.stringify(foreignAnswer.body)).not.toMatch(new RegExp(`${foreign.slug}|Foreign`));
    });

    it('refuses names that would collide (tools, prompts, resource URIs) with 409 name_collision naming them', async () => {
      const sameNames = await create([{ serverId: main.id, prefix: '' }, { serverId: twin.id, prefix: '' }]);
      expect(sameNames.status).toBe(409);
      expect(sameNames.body.error.code).toBe('name_collision');
      expect(sameNames.body.error.message).toContain("tool 'search'");
      expect(sameNames.body.error.message).toContain("tool 'fetch'");
      expect(sameNames.body.error.message).toContain("prompt 'summarise'");
      expect(sameNames.body.error.message).toContain("resource URI 'docs://shared/readme'");

      // Prefixes keep tools and prompts apart, but a resource keeps its URI: the shared one still collides.
      const prefixed = await create([{ serverId: main.id }, { serverId: twin.id }]);
      expect(prefixed.status).toBe(409);
      expect(prefixed.body.error.message).toContain("resource URI 'docs://shared/readme'");
      expect(prefixed.body.error.message).not.toContain('tool');

      const samePrefix = await create([{ serverId: main.id, prefix: 'x' }, { serverId: other.id, prefix: 'x' }]);
      expect(samePrefix.status).toBe(409);
      expect(samePrefix.body.error).toMatchObject({ code: 'name_collision', message: expect.stringContaining("'x'") });
      // Distinct names under one empty prefix are fine.
      expect((await create([{ serverId: main.id, prefix: '' }, { serverId: other.id, prefix: '' }])).status).toBe(201);
    });

    it('lets team owners and admins compose; members get 403 and outsiders 404', async () => {
      expect((await create([{ serverId: other.id }], teamAdmin)).status).toBe(201);
      expect((await create([{ serverId: other.id }], member)).status).toBe(403);
      expect((await create([{ serverId: other.id }], outsider)).status).toBe(404);
    });
  });

  describe('changing', () => {
    it('needs If-Match (428) at the current revision (412), and changes nothing when refused', async () => {
      const gateway = await created([{ serverId: main.id }]);
      const missing = await patch(gateway, { name: 'New' }, null);
      expect(missing.status).toBe(428);
      const stale = await patch(gateway, { name: 'New' }, gateway.revision + 1);
      expect(stale.status).toBe(412);
      const colliding = await patch(gateway, { servers: [{ serverId: main.id, prefix: '' }, { serverId: twin.id, prefix: '' }] }, gateway.revision);
      expect(colliding.status).toBe(409);
      expect(colliding.body.error.code).toBe('name_collision');
      const bad = await patch(gateway, { name: 'New', servers: [{ serverId: foreign.id }] }, gateway.revision);
      expect(bad.status).toBe(400);
      expect((await owner.client.get(`${gateways()}/${gateway.id}`)).body.data).toEqual(gateway);
    });

    it('changes fields, replaces the server list only when given, moves the revision and audits only what changed', async () => {
      const gateway = await created([{ serverId: main.id }]);
      const renamed = await patch(gateway, { name: 'Renamed' }, gateway.revision);
      expect(renamed.status).toBe(200);
      expect(renamed.headers.get('etag')).toBe(`"${gateway.revision + 1}"`);
      expect(renamed.body.data).toMatchObject({ name: 'Renamed', revision: gateway.revision + 1, servers: gateway.servers });

      const slug = unique('moved');
      const replaced = await patch(gateway, { slug, servers: [{ serverId: other.id, prefix: 'o' }, { serverId: main.id }] }, gateway.revision + 1);
      expect(replaced.status).toBe(200);
      expect(replaced.body.data).toMatchObject({ slug, name: 'Renamed', revision: gateway.revision + 2 });
      expect(replaced.body.data.servers.map((s: { serverId: string; prefix: string }) => [s.serverId, s.prefix])).toEqual([
        [other.id, 'o'],
        [main.id, main.slug],
      ]);
      expect((await member.client.get(`${gateways()}/${slug}`)).body.data).toEqual(replaced.body.data);

      const nameEntry = await auditEntry('gateway.update', gateway.id, (e) => (e.after as Record<string, unknown>)?.name === 'Renamed');
      expect(nameEntry.before).toEqual({ name: 'Gateway' });
      expect(nameEntry.after).toEqual({ name: 'Renamed' });
      const serversEntry = await auditEntry('gateway.update', gateway.id, (e) => 'servers' in ((e.after as object) ?? {}));
      expect(Object.keys(serversEntry.after).sort()).toEqual(['servers', 'slug']);
      expect(serversEntry.before.servers).toEqual([{ serverId: main.id, prefix: main.slug }]);

      const emptied = await patch(gateway, { servers: [] }, gateway.revision + 2);
      expect(emptied.status).toBe(200);
      expect(emptied.body.data.servers).toEqual([]);
    });

    it('refuses a slug taken by another gateway with 409 conflict', async () => {
      const first = await created([]);
      const second = await created([]);
      const taken = await patch(second, { slug: first.slug }, second.revision);
      expect(taken.status).toBe(409);
      expect(taken.body.error.code).toBe('conflict');
    });

    it('disables a gateway, refused to its members at the next access check', async () => {
      const gateway = await created([{ serverId: other.id }]);
      expect((await clients.catalog.checkGatewayAccess({ slug: gateway.slug, personId: member.id })).allowed).toBe(true);
      const disabled = await patch(gateway, { enabled: false }, gateway.revision, teamAdmin);
      expect(disabled.status).toBe(200);
      expect(disabled.body.data.enabled).toBe(false);
      expect((await clients.catalog.checkGatewayAccess({ slug: gateway.slug, personId: member.id })).allowed).toBe(false);
    });

    it('lets team owners and admins change; members get 403 and outsiders 404', async () => {
      const gateway = await created([]);
      expect((await patch(gateway, { name: 'By member' }, gateway.revision, member)).status).toBe(403);
      expect((await patch(gateway, { name: 'By outsider' }, gateway.revision, outsider)).status).toBe(404);
    });
  });

  describe('deleting', () => {
    it('deletes a gateway (204), audits it, and it no longer resolves', async () => {
      const gateway = await created([{ serverId: other.id }]);
      expect((await member.client.delete(`${gateways()}/${gateway.id}`)).status).toBe(403);
      expect((await outsider.client.delete(`${gateways()}/${gateway.id}`)).status).toBe(404);
      expect((await owner.client.delete(`${gateways()}/${gateway.slug}`)).status).toBe(204);
      expect((await owner.client.get(`${gateways()}/${gateway.id}`)).status).toBe(404);
      expect((await owner.client.delete(`${gateways()}/${gateway.id}`)).status).toBe(404);
      await expect(clients.catalog.resolveGateway({ slug: gateway.slug })).rejects.toMatchObject({ code: 'not_found' });
      const entry = await auditEntry('gateway.delete', gateway.id);
      expect(entry.before).toMatchObject({ slug: gateway.slug, servers: [{ serverId: other.id, prefix: other.slug }] });
    });

    it('drops a deleted MCP server from the gateways that named it', async () => {
      const doomed = await registerServer(owner, team, await start({ tools: { doomed: 'Doomed' } }), { name: 'Doomed' });
      const gateway = await created([{ serverId: doomed.id }, { serverId: other.id }]);
      expect((await owner.client.delete(`/v1/teams/${team}/mcp-servers/${doomed.id}`)).status).toBe(204);
      const read = await owner.client.get(`${gateways()}/${gateway.id}`);
      expect(read.body.data.servers.map((s: { serverId: string }) => s.serverId)).toEqual([other.id]);
      // The deletion's entry names the gateways it left: their lists changed without an entry of their own.
      expect((await auditEntry('mcp_server.delete', doomed.id)).metadata).toEqual({ removedFromGateways: [gateway.id] });
    });
  });
});
