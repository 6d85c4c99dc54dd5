import {
  adminClient,
  eventually,
  newPerson,
  newTeam,
  startTestPlatform,
  unique,
  type ApiClient,
  type TestPerson,
  type TestPlatform,
} from '@platform/test';
import { startUpstream, type Upstream } from '../capabilities/upstream';
import { adminChange, adminPath, PLATFORM_TEAM, PUBLIC_URL, registerServer, type AdminServerJson } from './support';

const HEADER_SECRET = 'platform-header-secret-value-0001';
const TEAM_SECRET = 'Bearer team-credential-secret-9876';

/** Op 16 (PATCH /v1/admin/mcp-servers/{id}) and platform servers managed through the platform team's routes. */
describe('platform servers: op 16 and the platform team routes', () => {
  let platform: TestPlatform;
  let upstream: Upstream;
  let admin: ApiClient;
  let platformAdmin: TestPerson;
  let auditor: TestPerson;
  let staff: TestPerson;
  let owner: TestPerson;
  let team: string;
  let otherTeam: string;
  let otherTeamId: string;

  beforeAll(async () => {
    // The test counts what reaches the upstream: background health checks and scheduled refreshes stay off (the test platform's default).
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' } });
    upstream = await startUpstream('X-Upstream-Key');
    upstream.state.tools = [
      { name: 'search', description: 'Search the web' },
      { name: 'fetch', description: 'Fetch a page' },
    ];
    admin = await adminClient(platform);
    // Not a member of the platform team: platform admins manage its servers by their platform role.
    platformAdmin = await newPerson(platform, admin, 'platform-admin', 'admin');
    auditor = await newPerson(platform, admin, 'auditor', 'auditor');
    staff = await newPerson(platform, admin, 'staff', 'staff');
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
    otherTeam = await newTeam(admin, owner);
    otherTeamId = (await admin.get(`/v1/teams/${otherTeam}`)).body.data.id;
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
    await upstream?.close();
  });

  const read = async (serverId: string): Promise<AdminServerJson> => {
    const response = await platformAdmin.client.get(adminPath(serverId));
    expect(response.status).toBe(200);
    return response.body.data as AdminServerJson;
  };
  const auditOf = async (teamRef: string, serverId: string, count: number) =>
    eventually(
      async () => {
        const page = await admin.get(`/v1/teams/${teamRef}/audit?action=mcp_server.admin_update`);
        const entries = (page.body.data ?? []) as { targetId: string; before: Record<string, unknown>; after: Record<string, unknown>; metadata: Record<string, unknown> }[];
        return entries.filter((entry) => entry.targetId === serverId);
      },
      (entries) => entries.length >= count,
    );

  it('lets platform admins (not members) manage the platform team\'s servers through the team routes; others cannot', async () => {
    const created = await platformAdmin.client.post(`/v1/teams/${PLATFORM_TEAM}/mcp-servers`, { name: 'Web', slug: unique('web'), url: PUBLIC_URL });
    expect(created.status).toBe(201);
    const path = `/v1/teams/${PLATFORM_TEAM}/mcp-servers/${created.body.data.id}`;
    const changed = await platformAdmin.client.patch(path, { name: 'Web search' }, { 'if-match': '"1"' });
    expect(changed.status).toBe(200);
    expect(changed.body.data.name).toBe('Web search');
    // Auditors and staff read platform servers but do not manage them; a team owner does not see the platform team's.
    expect((await auditor.client.get(path)).status).toBe(200);
    expect((await auditor.client.post(`/v1/teams/${PLATFORM_TEAM}/mcp-servers`, { name: 'x', slug: unique('x'), url: PUBLIC_URL })).status).toBe(403);
    expect((await staff.client.delete(path)).status).toBe(403);
    expect((await owner.client.patch(path, { name: 'mine' }, { 'if-match': '"2"' })).status).toBe(404);
    // The platform role reaches the platform team only: another team's servers stay its owners' (403: a platform
    // admin sees every team, but changing a team's server through the team routes is its owners' and admins').
    const teamServer = await registerServer(owner.client, team);
    expect((await platformAdmin.client.patch(`/v1/teams/${team}/mcp-servers/${teamServer.id}`, { name: 'x' }, { 'if-match': '"1"' })).status).toBe(403);
    expect((await platformAdmin.client.delete(path)).status).toBe(204);
  });

  it('shows the admin view (§2.4) with the present tools after a discovery, and only to platform staff', async () => {
    const server = await registerServer(platformAdmin.client, PLATFORM_TEAM, { url: upstream.url, description: 'Upstream' });
    const before = await read(server.id);
    // Its own field list: none of the team view's (§2.3) fields such as hasAuth, authMode, oauth or requirement.
    expect(Object.keys(before).sort()).toEqual(
      [
        'accessMode', 'capabilitiesFingerprint', 'createdAt', 'description', 'enabled', 'hasHeaders', 'id', 'name', 'personal', 'revision', 'slug', 'team',
        'teams', 'tools', 'toolsError', 'toolsRefreshedAt', 'updatedAt', 'url', 'visibility',
      ].sort(),
    );
    expect(before).toMatchObject({
      id: server.id,
      slug: server.slug,
      description: 'Upstream',
      url: upstream.url,
      accessMode: 'proxy',
      enabled: true,
      visibility: 'teams',
      personal: false,
      teams: [],
      hasHeaders: false,
      tools: [],
      toolsRefreshedAt: null,
      toolsError: null,
      team: { slug: PLATFORM_TEAM, kind: 'platform', name: 'Platform' },
      revision: 1,
    });
    expect((await platformAdmin.client.post(`/v1/teams/${PLATFORM_TEAM}/mcp-servers/${server.id}/refresh`)).status).toBe(200);
    const after = await read(server.id);
    expect(after.tools).toEqual([
      { name: 'fetch', title: 'fetch title', description: 'Fetch a page' },
      { name: 'search', title: 'search title', description: 'Search the web' },
    ]);
    expect(after.toolsRefreshedAt).toEqual(expect.any(String));
    expect(after.toolsError).toBeNull();
    const response = await platformAdmin.client.get(adminPath(server.id));
    expect(response.headers.get('etag')).toBe(`"${after.revision}"`);
    // The discovery moved no revision (it is not an admin's write); a revalidation naming it, as a browser sends it
    // for what it cached, still gets the tools, not a 304.
    expect(after.revision).toBe(before.revision);
    const revalidated = await platformAdmin.client.get(adminPath(server.id), { 'if-none-match': `"${before.revision}"`, 'cache-control': 'max-age=0' });
    expect(revalidated.status).toBe(200);
    expect(revalidated.body.data.tools).toEqual(after.tools);

    expect((await auditor.client.get(adminPath(server.id))).status).toBe(200);
    expect((await staff.client.get('/v1/admin/mcp-servers')).status).toBe(200);
    expect((await owner.client.get(adminPath(server.id))).status).toBe(403);
    expect((await owner.client.get('/v1/admin/mcp-servers')).status).toBe(403);
    expect((await platformAdmin.client.get(adminPath('00000000-0000-4000-8000-00000000abcd'))).status).toBe(404);
    expect((await platformAdmin.client.get(adminPath('not-a-uuid'))).status).toBe(400);
  });

  it('demands If-Match (428), refuses a stale one (412), and lets only platform admins change (team owner 403)', async () => {
    const server = await registerServer(platformAdmin.client, PLATFORM_TEAM);
    expect((await platformAdmin.client.patch(adminPath(server.id), { name: 'x' })).status).toBe(428);
    const stale = await platformAdmin.client.patch(adminPath(server.id), { name: 'x' }, { 'if-match': '"7"' });
    expect(stale.status).toBe(412);
    expect(stale.body.error.code).toBe('precondition_failed');

    const teamServer = await registerServer(owner.client, team);
    expect((await owner.client.patch(adminPath(teamServer.id), { enabled: false }, { 'if-match': '"1"' })).status).toBe(403);
    expect((await auditor.client.patch(adminPath(server.id), { name: 'x' }, { 'if-match': '"1"' })).status).toBe(403);
    expect((await staff.client.patch(adminPath(server.id), { name: 'x' }, { 'if-match': '"1"' })).status).toBe(403);
    expect(await read(server.id)).toMatchObject({ name: 'Server', revision: 1 });

    const changed = await platformAdmin.client.patch(adminPath(server.id), { name: '  Renamed  ', description: 'New', enabled: false }, { 'if-match': '"1"' });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ name: 'Renamed', description: 'New', enabled: false, revision: 2 });
    expect(changed.headers.get('etag')).toBe('"2"');
    expect((await platformAdmin.client.patch(adminPath('00000000-0000-4000-8000-00000000abcd'), { name: 'x' }, { 'if-match': '"1"' })).status).toBe(404);
  });

  it("keeps a team's own server proxy-only and team-visible: 400 team_mcp_visibility, nothing changed", async () => {
    const server = await registerServer(owner.client, team);
    for (const body of [
      { visibility: 'all' },
      { visibility: 'teams' },
      { personal: true },
      { accessMode: 'direct' },
      { teams: [otherTeam] },
      { name: 'Also renamed', visibility: 'all' },
    ]) {
      const refused = await platformAdmin.client.patch(adminPath(server.id), body, { 'if-match': '"1"' });
      expect([JSON.stringify(body), refused.status, refused.body.error?.code]).toEqual([JSON.stringify(body), 400, 'team_mcp_visibility']);
    }
    const unchanged = await read(server.id);
    expect(unchanged).toMatchObject({ name: 'Server', visibility: 'teams', personal: false, accessMode: 'proxy', revision: 1 });
    // The team's own server reads as offered to its team alone.
    expect(unchanged.teams.map((t) => t.slug)).toEqual([team]);
    expect(unchanged.team).toMatchObject({ slug: team, kind: 'team' });

    // What it already is, and everything else, may be set.
    const accepted = await platformAdmin.client.patch(
      adminPath(server.id),
      { personal: false, accessMode: 'proxy', teams: [team], enabled: false, name: 'Team server' },
      { 'if-match': '"1"' },
    );
    expect(accepted.status).toBe(200);
    expect(accepted.body.data).toMatchObject({ personal: false, accessMode: 'proxy', visibility: 'teams', enabled: false, name: 'Team server', revision: 2 });
    expect(accepted.body.data.teams.map((t: { slug: string }) => t.slug)).toEqual([team]);
  });

  it('offers a platform server to chosen teams by slug or id, to all, and in personal workspaces; unknown teams are a 400', async () => {
    const server = await registerServer(platformAdmin.client, PLATFORM_TEAM);
    const offered = await adminChange(platformAdmin.client, server.id, { visibility: 'teams', teams: [team, otherTeamId, team.toUpperCase()], personal: true, accessMode: 'direct' });
    expect(offered.status).toBe(200);
    const data = offered.body.data as AdminServerJson;
    expect(data).toMatchObject({ visibility: 'teams', personal: true, accessMode: 'direct' });
    expect(data.teams.map((t) => t.slug).sort()).toEqual([team, otherTeam].sort());
    expect(data.teams.find((t) => t.slug === otherTeam)).toEqual({ id: otherTeamId, slug: otherTeam, name: otherTeam });

    for (const teams of [[team, 'no-such-team'], [PLATFORM_TEAM], ['00000000-0000-4000-8000-00000000beef'], ['Not A Slug!']]) {
      const refused = await adminChange(platformAdmin.client, server.id, { teams, visibility: 'all' });
      expect([teams, refused.status, refused.body.error.code]).toEqual([teams, 400, 'invalid_request']);
      expect(refused.body.error.fields.map((f: { field: string }) => f.field)).toContain('teams');
    }
    const unchanged = await read(server.id);
    expect(unchanged.visibility).toBe('teams');
    expect(unchanged.teams).toHaveLength(2);

    const toAll = await adminChange(platformAdmin.client, server.id, { visibility: 'all', teams: [] });
    expect(toAll.status).toBe(200);
    expect(toAll.body.data).toMatchObject({ visibility: 'all', teams: [] });
  });

  it('validates every field with a clear 400 naming it, and changes nothing', async () => {
    const server = await registerServer(platformAdmin.client, PLATFORM_TEAM);
    const manyHeaders = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-Header-${i}`, 'v']));
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'n'.repeat(101) }, 'name'],
      [{ name: '   ' }, 'name'],
      [{ description: 'd'.repeat(2001) }, 'description'],
      [{ url: `https://1.1.1.1/${'u'.repeat(2048)}` }, 'url'],
      [{ accessMode: 'tunnel' }, 'accessMode'],
      [{ visibility: 'public' }, 'visibility'],
      [{ personal: 'yes' }, 'personal'],
      [{ enabled: 'no' }, 'enabled'],
      [{ teams: 'acme' }, 'teams'],
      [{ headers: manyHeaders }, 'headers'],
      [{ headers: { 'Bad Name': 'v' } }, 'headers.Bad Name'],
      [{ headers: { 'X-Key': 'line\nbreak' } }, 'headers.X-Key'],
      [{ headers: { 'X-Key': 'price-in-\u20ac' } }, 'headers.X-Key'],
      [{ headers: { 'X-Key': 'caf\u00e9' } }, 'headers.X-Key'],
      [{ headers: { 'X-Key': '' } }, 'headers.X-Key'],
      [{ headers: { 'X-Key': 'k'.repeat(8193) } }, 'headers.X-Key'],
      [{ headers: { Host: 'evil.example' } }, 'headers.Host'],
      [{ headers: { 'X-Key': 'a', 'x-key': 'b' } }, 'headers.x-key'],
      [{ headers: { 'X-Key': 1 } }, 'headers.X-Key'],
      [{ slug: 'new-slug' }, 'slug'],
    ];
    for (const [body, field] of cases) {
      const refused = await platformAdmin.client.patch(adminPath(server.id), body, { 'if-match': '"1"' });
      expect([field, refused.status, refused.body.error?.code]).toEqual([field, 400, 'invalid_request']);
      expect(refused.body.error.fields.map((f: { field: string }) => f.field)).toContain(field);
      expect(JSON.stringify(refused.body)).not.toContain('line\nbreak');
      expect(JSON.stringify(refused.body)).not.toMatch(/price-in|caf\u00e9/);
    }
    // Within the limits: 20 headers, and a url of exactly 2,048 characters (§8), are accepted.
    const twenty = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`X-Header-${i}`, 'v']));
    const longestUrl = `${PUBLIC_URL}/${'u'.repeat(2048 - PUBLIC_URL.length - 1)}`;
    expect(longestUrl).toHaveLength(2048);
    expect(await read(server.id)).toMatchObject({ revision: 1, hasHeaders: false });
    const accepted = await platformAdmin.client.patch(adminPath(server.id), { headers: twenty, name: 'n'.repeat(100), description: 'd'.repeat(2000), url: longestUrl }, { 'if-match': '"1"' });
    expect(accepted.status).toBe(200);
    expect(accepted.body.data).toMatchObject({ hasHeaders: true, revision: 2, url: longestUrl });
  });

  it('refuses a URL the address guard refuses (422 address_not_allowed), changing nothing', async () => {
    const server = await registerServer(platformAdmin.client, PLATFORM_TEAM);
    for (const url of ['https://169.254.169.254/latest', 'http://10.1.2.3/mcp', 'http://1.1.1.1/mcp', 'ftp://1.1.1.1/mcp']) {
      const refused = await platformAdmin.client.patch(adminPath(server.id), { url }, { 'if-match': '"1"' });
      expect([url, refused.status, refused.body.error.code]).toEqual([url, 422, 'address_not_allowed']);
    }
    expect(await read(server.id)).toMatchObject({ url: PUBLIC_URL, revision: 1 });
    const moved = await platformAdmin.client.patch(adminPath(server.id), { url: upstream.url }, { 'if-match': '"1"' });
    expect(moved.status).toBe(200);
    expect(moved.body.data.url).toBe(upstream.url);
  });

  it('replaces all headers (and the team credential), sends them upstream, removes them with {}, never returns or audits them', async () => {
    const server = await registerServer(platformAdmin.client, PLATFORM_TEAM, {
      url: upstream.url,
      authHeaderName: 'X-Upstream-Key',
      authValue: TEAM_SECRET,
    });
    const refresh = () => platformAdmin.client.post(`/v1/teams/${PLATFORM_TEAM}/mcp-servers/${server.id}/refresh`);
    const teamView = () => platformAdmin.client.get(`/v1/teams/${PLATFORM_TEAM}/mcp-servers/${server.id}`);
    expect(await read(server.id)).toMatchObject({ hasHeaders: true });

    const replaced = await adminChange(platformAdmin.client, server.id, { headers: { 'X-Upstream-Key': HEADER_SECRET, 'X-Tenant': 'acme' } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.data.hasHeaders).toBe(true);
    expect(JSON.stringify(replaced.body)).not.toContain(HEADER_SECRET);
    // The single credential of the team API is gone (the headers replaced it), but a secret is still sent: hasAuth.
    expect((await teamView()).body.data).toMatchObject({ hasAuth: true, authHeaderName: null, authValueHint: null });
    upstream.state.seenCredentials = [];
    expect((await refresh()).status).toBe(200);
    expect(upstream.state.seenCredentials.length).toBeGreaterThan(0);
    expect(new Set(upstream.state.seenCredentials)).toEqual(new Set([HEADER_SECRET]));

    const listed = await platformAdmin.client.get(`/v1/admin/mcp-servers?team=${PLATFORM_TEAM}&limit=200`);
    expect(JSON.stringify(listed.body)).not.toContain(HEADER_SECRET);
    expect(JSON.stringify((await teamView()).body)).not.toContain(HEADER_SECRET);

    const removed = await adminChange(platformAdmin.client, server.id, { headers: {} });
    expect(removed.status).toBe(200);
    expect(removed.body.data.hasHeaders).toBe(false);
    upstream.state.seenCredentials = [];
    expect((await refresh()).status).toBe(200);
    expect(new Set(upstream.state.seenCredentials)).toEqual(new Set([undefined]));

    // Audited on the platform team with the changed field names; the values appear nowhere.
    const entries = await auditOf(PLATFORM_TEAM, server.id, 2);
    // Exactly the two changes (replaced, then removed), each naming only the headers.
    expect(entries.map((entry) => entry.metadata.changed)).toEqual([['headers'], ['headers']]);
    expect(entries.map((entry) => entry.after.hasHeaders).sort()).toEqual([false, true]);
    expect(JSON.stringify(entries)).not.toContain(HEADER_SECRET);
    expect(JSON.stringify(entries)).not.toContain('acme');
    expect(JSON.stringify(entries)).not.toContain('team-credential-secret');
  });

  it("shows hasAuth on a team's server while a platform admin's headers are sent, even after the team clears its own credential", async () => {
    const server = await registerServer(owner.client, team, { url: upstream.url, authValue: TEAM_SECRET });
    const path = `/v1/teams/${team}/mcp-servers/${server.id}`;
    const teamView = async () => (await owner.client.get(path)).body.data;
    const sentUpstream = async () => {
      upstream.state.seenCredentials = [];
      expect((await owner.client.post(`${path}/refresh`)).status).toBe(200);
      return new Set(upstream.state.seenCredentials);
    };
    expect(await teamView()).toMatchObject({ hasAuth: true, authHeaderName: 'Authorization', authValueHint: '9876' });

    expect((await adminChange(platformAdmin.client, server.id, { headers: { 'X-Upstream-Key': HEADER_SECRET } })).status).toBe(200);
    // The team's credential was replaced by the headers: no header name or hint of its own, but a secret is sent.
    expect(await teamView()).toMatchObject({ hasAuth: true, authMode: 'static', authHeaderName: null, authValueHint: null });
    expect(await sentUpstream()).toEqual(new Set([HEADER_SECRET]));

    // Clearing the team's credential through the team route leaves the platform admin's headers in place.
    const cleared = await owner.client.patch(path, { authValue: '' }, { 'if-match': `"${(await teamView()).revision}"` });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data).toMatchObject({ hasAuth: true, authHeaderName: null, authValueHint: null });
    expect(await sentUpstream()).toEqual(new Set([HEADER_SECRET]));
    expect(JSON.stringify(await teamView())).not.toContain(HEADER_SECRET);

    // Only op 16 removes them; then nothing secret is stored.
    expect((await adminChange(platformAdmin.client, server.id, { headers: {} })).status).toBe(200);
    expect(await teamView()).toMatchObject({ hasAuth: false, authMode: 'none', authHeaderName: null, authValueHint: null });
    expect(await sentUpstream()).toEqual(new Set([undefined]));
  });

  it("audits an admin change of a team's server on that team, naming the changed fields", async () => {
    const server = await registerServer(owner.client, team);
    expect((await adminChange(platformAdmin.client, server.id, { enabled: false, name: 'Paused', description: '' })).status).toBe(200);
    const [entry] = await auditOf(team, server.id, 1);
    expect(entry!.metadata.changed).toEqual(['name', 'enabled']);
    expect(entry!.before).toMatchObject({ name: 'Server', enabled: true });
    expect(entry!.after).toMatchObject({ name: 'Paused', enabled: false });
  });

  it("lists every team's servers by slug with cursor paging and an optional team filter", async () => {
    const listTeam = await newTeam(admin, owner);
    const prefix = unique('p').replace(/-/g, '');
    const mine = [];
    for (const suffix of ['c', 'a', 'b']) mine.push(await registerServer(owner.client, listTeam, { slug: `${prefix}-${suffix}` }));
    const platformOne = await registerServer(platformAdmin.client, PLATFORM_TEAM, { slug: `${prefix}-a` });

    const firstPage = await auditor.client.get(`/v1/admin/mcp-servers?team=${listTeam}&limit=2`);
    expect(firstPage.status).toBe(200);
    expect(firstPage.body.data.map((s: AdminServerJson) => s.slug)).toEqual([`${prefix}-a`, `${prefix}-b`]);
    expect(firstPage.body.data[0].team).toMatchObject({ slug: listTeam, kind: 'team' });
    const secondPage = await auditor.client.get(`/v1/admin/mcp-servers?team=${listTeam}&limit=2&cursor=${firstPage.body.nextCursor}`);
    expect(secondPage.body.data.map((s: AdminServerJson) => s.slug)).toEqual([`${prefix}-c`]);
    expect(secondPage.body.nextCursor).toBeNull();
    const byId = await auditor.client.get(`/v1/admin/mcp-servers?team=${(await admin.get(`/v1/teams/${listTeam}`)).body.data.id}`);
    expect(byId.body.data.map((s: AdminServerJson) => s.id).sort()).toEqual(mine.map((s) => s.id).sort());

    // Unfiltered, every team's servers appear, walking pages of one: the two `-a` slugs both, in id order.
    const seen: AdminServerJson[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page: { body: { data: AdminServerJson[]; nextCursor: string | null } } = await platformAdmin.client.get(
        `/v1/admin/mcp-servers?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...page.body.data);
      cursor = page.body.nextCursor;
    }
    expect(new Set(seen.map((s) => s.id)).size).toBe(seen.length);
    const ours = seen.filter((s) => s.slug.startsWith(prefix));
    expect(ours.map((s) => s.slug)).toEqual([`${prefix}-a`, `${prefix}-a`, `${prefix}-b`, `${prefix}-c`]);
    expect(ours.slice(0, 2).map((s) => s.id)).toEqual([platformOne.id, mine[1]!.id].sort());

    expect((await auditor.client.get('/v1/admin/mcp-servers?team=no-such-team')).status).toBe(400);
    expect((await auditor.client.get('/v1/admin/mcp-servers?cursor=bm90LWEtY3Vyc29y')).status).toBe(400);
  });
});
