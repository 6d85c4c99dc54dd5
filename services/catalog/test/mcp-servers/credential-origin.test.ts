import { adminClient, newPerson, newTeam, startTestPlatform, unique, type ApiClient, type TestPerson, type TestPlatform } from '@platform/test';
import { startUpstream, type Upstream } from '../capabilities/upstream';
import { adminChange, adminPath, PLATFORM_TEAM, registerServer, type AdminServerJson } from '../platform-servers/support';

const HEADER = 'X-Upstream-Key';

/**
 * A stored secret is sent only to the origin it was given for (docs/api.md, MCP servers): neither the team route nor
 * op 16 moves a server to another origin (here: another port of 127.0.0.1) while a stored secret would go along ungiven.
 * Both routes share one platform and the same two upstreams; each block keeps its own secrets.
 */
describe('stored secrets stay with the origin they were given for', () => {
  let platform: TestPlatform;
  let admin: ApiClient;
  let owner: TestPerson;
  let platformAdmin: TestPerson;
  let team: string;
  let home: Upstream;
  let elsewhere: Upstream;

  beforeAll(async () => {
    // Health checks and scheduled refreshes stay off (the test platform's default): only the test's refreshes reach the upstreams.
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' } });
    home = await startUpstream(HEADER);
    elsewhere = await startUpstream(HEADER);
    admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    platformAdmin = await newPerson(platform, admin, 'platform-admin', 'admin');
    team = await newTeam(admin, owner);
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
    await home?.close();
    await elsewhere?.close();
  });

  const teamRoute = (teamRef: string, serverId: string) => `/v1/teams/${teamRef}/mcp-servers/${serverId}`;
  /** What a refresh through the server's team route sends each upstream in the credential header (no entry: that upstream got no request). */
  async function sentOnRefresh(client: ApiClient, route: string): Promise<{ home: Set<string | undefined>; elsewhere: Set<string | undefined> }> {
    home.state.seenCredentials = [];
    elsewhere.state.seenCredentials = [];
    expect((await client.post(`${route}/refresh`)).status).toBe(200);
    return { home: new Set(home.state.seenCredentials), elsewhere: new Set(elsewhere.state.seenCredentials) };
  }

  /**
   * The team route moves a server only with the credential given again or removed, and never while headers a platform
   * admin set are stored.
   */
  describe('MCP servers: a stored credential stays with its origin', () => {
    const SECRET = 'Bearer stored-team-credential-0001';
    const NEW_SECRET = 'Bearer re-entered-team-credential-0002';
    const ADMIN_HEADER_SECRET = 'platform-admin-header-secret-0003';

    /** A server of the team at `home` with the credential stored; returns its team route path. */
    async function register(body: Record<string, unknown> = { authHeaderName: HEADER, authValue: SECRET }): Promise<string> {
      const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: 'Moving', slug: unique('mv'), url: home.url, ...body });
      expect(created.status).toBe(201);
      return teamRoute(team, created.body.data.id);
    }
    const view = async (path: string) => (await owner.client.get(path)).body.data;
    const change = async (path: string, body: Record<string, unknown>) => owner.client.patch(path, body, { 'if-match': `"${(await view(path)).revision}"` });

    it('refuses moving to another origin without authValue: 400 naming authValue, never the value, and nothing changes', async () => {
      const path = await register();
      const before = await view(path);
      for (const body of [{ url: elsewhere.url }, { url: elsewhere.url, name: 'Also renamed' }, { url: elsewhere.url, authHeaderName: 'X-Other' }]) {
        const refused = await change(path, body);
        expect([JSON.stringify(body), refused.status, refused.body.error?.code]).toEqual([JSON.stringify(body), 400, 'invalid_request']);
        expect(refused.body.error.fields.map((f: { field: string }) => f.field)).toEqual(['authValue']);
        expect(refused.body.error.fields[0].problem).toMatch(/another origin/);
        expect(JSON.stringify(refused.body)).not.toContain('stored-team-credential');
      }
      expect(await view(path)).toEqual(before);
      expect(before).toMatchObject({ url: home.url, revision: 1, hasAuth: true, authHeaderName: HEADER, authValueHint: '0001' });
      // The credential still goes to the origin it was given for, and nothing reaches the other.
      expect(await sentOnRefresh(owner.client, path)).toEqual({ home: new Set([SECRET]), elsewhere: new Set() });
    });

    it('moves to another origin with a new authValue: the new upstream receives the new value, the old one nothing', async () => {
      const path = await register();
      const moved = await change(path, { url: elsewhere.url, authValue: NEW_SECRET });
      expect(moved.status).toBe(200);
      expect(moved.body.data).toMatchObject({ url: elsewhere.url, revision: 2, hasAuth: true, authHeaderName: HEADER, authValueHint: '0002' });
      expect(await sentOnRefresh(owner.client, path)).toEqual({ home: new Set(), elsewhere: new Set([NEW_SECRET]) });
    });

    it('moves to another origin with authValue "": no credential is sent there', async () => {
      const path = await register();
      const moved = await change(path, { url: elsewhere.url, authValue: '' });
      expect(moved.status).toBe(200);
      expect(moved.body.data).toMatchObject({ url: elsewhere.url, hasAuth: false, authHeaderName: null, authValueHint: null });
      expect(await sentOnRefresh(owner.client, path)).toEqual({ home: new Set(), elsewhere: new Set([undefined]) });
    });

    it('keeps the credential on a path-only change of the same origin, and lets a server without secrets move freely', async () => {
      const path = await register();
      const samePlace = home.url.replace(/\/mcp$/, '/mcp-v2');
      const moved = await change(path, { url: samePlace });
      expect(moved.status).toBe(200);
      expect(moved.body.data).toMatchObject({ url: samePlace, hasAuth: true, authValueHint: '0001' });
      expect(await sentOnRefresh(owner.client, path)).toEqual({ home: new Set([SECRET]), elsewhere: new Set() });

      const plain = await register({});
      expect((await change(plain, { url: elsewhere.url })).status).toBe(200);
      expect(await sentOnRefresh(owner.client, plain)).toEqual({ home: new Set(), elsewhere: new Set([undefined]) });
    });

    it("refuses the team moving a server that holds a platform admin's headers to another origin (403), even with authValue", async () => {
      const path = await register();
      const serverId = path.split('/').pop()!;
      const current = (await platformAdmin.client.get(`/v1/admin/mcp-servers/${serverId}`)).body.data;
      const headersSet = await platformAdmin.client.patch(
        `/v1/admin/mcp-servers/${serverId}`,
        { headers: { [HEADER]: ADMIN_HEADER_SECRET } },
        { 'if-match': `"${current.revision}"` },
      );
      expect(headersSet.status).toBe(200);
      const before = await view(path);
      for (const body of [{ url: elsewhere.url }, { url: elsewhere.url, authValue: NEW_SECRET }, { url: elsewhere.url, authValue: '' }]) {
        const refused = await change(path, body);
        expect([JSON.stringify(body), refused.status, refused.body.error?.code]).toEqual([JSON.stringify(body), 403, 'forbidden']);
        expect(refused.body.error.message).toMatch(/platform admin/);
        expect(JSON.stringify(refused.body)).not.toMatch(/platform-admin-header-secret|re-entered-team-credential/);
      }
      expect(await view(path)).toEqual(before);
      expect(await sentOnRefresh(owner.client, path)).toEqual({ home: new Set([ADMIN_HEADER_SECRET]), elsewhere: new Set() });

      // Within the same origin the team still changes the path.
      const samePlace = home.url.replace(/\/mcp$/, '/mcp-v3');
      expect((await change(path, { url: samePlace })).status).toBe(200);
      expect(await sentOnRefresh(owner.client, path)).toEqual({ home: new Set([ADMIN_HEADER_SECRET]), elsewhere: new Set() });
    });
  });

  /**
   * Op 16 moves a server only when no stored secret goes along ungiven: the admin's headers are given again or removed,
   * and a team's credential, which the admin cannot give, blocks the move until the team clears it.
   */
  describe('op 16: stored secrets stay with their origin', () => {
    const TEAM_SECRET = 'Bearer team-credential-secret-1111';
    const HEADER_SECRET = 'platform-header-secret-2222';
    const NEW_HEADER_SECRET = 'platform-header-secret-3333';

    const read = async (serverId: string): Promise<AdminServerJson> => (await platformAdmin.client.get(adminPath(serverId))).body.data;
    const refusedFields = (response: { status: number; body: { error?: { code: string; fields?: { field: string }[] } } }) => [
      response.status,
      response.body.error?.code,
      response.body.error?.fields?.map((f) => f.field),
    ];

    it("refuses moving a team's server that holds the team's credential (400 naming url); the team clears it, then the move is allowed", async () => {
      const server = await registerServer(owner.client, team, { url: home.url, authHeaderName: HEADER, authValue: TEAM_SECRET });
      const route = teamRoute(team, server.id);
      const before = await read(server.id);
      for (const body of [{ url: elsewhere.url }, { url: elsewhere.url, name: 'Moved', enabled: false }]) {
        const refused = await adminChange(platformAdmin.client, server.id, body);
        expect(refusedFields(refused)).toEqual([400, 'invalid_request', ['url']]);
        expect(refused.body.error.fields[0].problem).toMatch(/team's stored credential/);
        expect(JSON.stringify(refused.body)).not.toContain('team-credential-secret');
      }
      expect(await read(server.id)).toEqual(before);
      expect(before).toMatchObject({ url: home.url, revision: 1, hasHeaders: true });
      expect(await sentOnRefresh(owner.client, route)).toEqual({ home: new Set([TEAM_SECRET]), elsewhere: new Set() });

      // A path on the same origin is no move.
      const samePlace = home.url.replace(/\/mcp$/, '/mcp-v2');
      expect((await adminChange(platformAdmin.client, server.id, { url: samePlace })).status).toBe(200);
      expect(await sentOnRefresh(owner.client, route)).toEqual({ home: new Set([TEAM_SECRET]), elsewhere: new Set() });

      const cleared = await owner.client.patch(route, { authValue: '' }, { 'if-match': `"${(await read(server.id)).revision}"` });
      expect(cleared.status).toBe(200);
      const moved = await adminChange(platformAdmin.client, server.id, { url: elsewhere.url });
      expect(moved.status).toBe(200);
      expect(moved.body.data).toMatchObject({ url: elsewhere.url, hasHeaders: false });
      expect(await sentOnRefresh(owner.client, route)).toEqual({ home: new Set(), elsewhere: new Set([undefined]) });
    });

    it("moves a team's server when the same change replaces the headers (which removes the team's credential): only the new headers go there", async () => {
      const server = await registerServer(owner.client, team, { url: home.url, authHeaderName: HEADER, authValue: TEAM_SECRET });
      const moved = await adminChange(platformAdmin.client, server.id, { url: elsewhere.url, headers: { [HEADER]: HEADER_SECRET } });
      expect(moved.status).toBe(200);
      expect(await sentOnRefresh(owner.client, teamRoute(team, server.id))).toEqual({ home: new Set(), elsewhere: new Set([HEADER_SECRET]) });
    });

    it('refuses moving a server with stored headers unless they are given again (400 naming headers); {} removes them', async () => {
      const server = await registerServer(platformAdmin.client, PLATFORM_TEAM, { url: home.url });
      const route = teamRoute(PLATFORM_TEAM, server.id);
      expect((await adminChange(platformAdmin.client, server.id, { headers: { [HEADER]: HEADER_SECRET } })).status).toBe(200);
      const before = await read(server.id);
      const refused = await adminChange(platformAdmin.client, server.id, { url: elsewhere.url });
      expect(refusedFields(refused)).toEqual([400, 'invalid_request', ['headers']]);
      expect(JSON.stringify(refused.body)).not.toContain('platform-header-secret');
      expect(await read(server.id)).toEqual(before);
      expect(await sentOnRefresh(platformAdmin.client, route)).toEqual({ home: new Set([HEADER_SECRET]), elsewhere: new Set() });

      const moved = await adminChange(platformAdmin.client, server.id, { url: elsewhere.url, headers: { [HEADER]: NEW_HEADER_SECRET } });
      expect(moved.status).toBe(200);
      expect(await sentOnRefresh(platformAdmin.client, route)).toEqual({ home: new Set(), elsewhere: new Set([NEW_HEADER_SECRET]) });

      const back = await adminChange(platformAdmin.client, server.id, { url: home.url, headers: {} });
      expect(back.status).toBe(200);
      expect(back.body.data).toMatchObject({ url: home.url, hasHeaders: false });
      expect(await sentOnRefresh(platformAdmin.client, route)).toEqual({ home: new Set([undefined]), elsewhere: new Set() });
    });

    it("refuses moving a platform server whose credential was stored through the platform team's route (400 naming url)", async () => {
      const server = await registerServer(platformAdmin.client, PLATFORM_TEAM, { url: home.url, authHeaderName: HEADER, authValue: TEAM_SECRET });
      const route = teamRoute(PLATFORM_TEAM, server.id);
      const refused = await adminChange(platformAdmin.client, server.id, { url: elsewhere.url });
      expect(refusedFields(refused)).toEqual([400, 'invalid_request', ['url']]);
      expect(await read(server.id)).toMatchObject({ url: home.url, revision: 1 });
      // The platform team's route moves it with the credential given again.
      const moved = await platformAdmin.client.patch(route, { url: elsewhere.url, authValue: TEAM_SECRET }, { 'if-match': '"1"' });
      expect(moved.status).toBe(200);
      expect(await sentOnRefresh(platformAdmin.client, route)).toEqual({ home: new Set(), elsewhere: new Set([TEAM_SECRET]) });
    });
  });
});
