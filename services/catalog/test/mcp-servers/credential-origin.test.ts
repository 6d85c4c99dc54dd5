import { adminClient, newPerson, newTeam, startTestPlatform, unique, type ApiClient, type TestPerson, type TestPlatform } from '@platform/test';
import { startUpstream, type Upstream } from '../capabilities/upstream';

const HEADER = 'X-Upstream-Key';
const SECRET = 'Bearer stored-team-credential-0001';
const NEW_SECRET = 'Bearer re-entered-team-credential-0002';
const ADMIN_HEADER_SECRET = 'platform-admin-header-secret-0003';

/**
 * A stored credential is sent only to the origin it was given for (docs/api.md, MCP servers): the team route moves a
 * server to another origin (here: another port of 127.0.0.1) only with the credential given again or removed, and
 * never while headers a platform admin set are stored.
 */
describe('MCP servers: a stored credential stays with its origin', () => {
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

  /** A server of the team at `home` with the credential stored; returns its team route path. */
  async function register(body: Record<string, unknown> = { authHeaderName: HEADER, authValue: SECRET }): Promise<string> {
    const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: 'Moving', slug: unique('mv'), url: home.url, ...body });
    expect(created.status).toBe(201);
    return `/v1/teams/${team}/mcp-servers/${created.body.data.id}`;
  }
  const view = async (path: string) => (await owner.client.get(path)).body.data;
  const change = async (path: string, body: Record<string, unknown>) => owner.client.patch(path, body, { 'if-match': `"${(await view(path)).revision}"` });
  /** What a refresh sends each upstream in the credential header (no entry: that upstream got no request). */
  async function sentOnRefresh(path: string): Promise<{ home: Set<string | undefined>; elsewhere: Set<string | undefined> }> {
    home.state.seenCredentials = [];
    elsewhere.state.seenCredentials = [];
    expect((await owner.client.post(`${path}/refresh`)).status).toBe(200);
    return { home: new Set(home.state.seenCredentials), elsewhere: new Set(elsewhere.state.seenCredentials) };
  }

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
    expect(await sentOnRefresh(path)).toEqual({ home: new Set([SECRET]), elsewhere: new Set() });
  });

  it('moves to another origin with a new authValue: the new upstream receives the new value, the old one nothing', async () => {
    const path = await register();
    const moved = await change(path, { url: elsewhere.url, authValue: NEW_SECRET });
    expect(moved.status).toBe(200);
    expect(moved.body.data).toMatchObject({ url: elsewhere.url, revision: 2, hasAuth: true, authHeaderName: HEADER, authValueHint: '0002' });
    expect(await sentOnRefresh(path)).toEqual({ home: new Set(), elsewhere: new Set([NEW_SECRET]) });
  });

  it('moves to another origin with authValue "": no credential is sent there', async () => {
    const path = await register();
    const moved = await change(path, { url: elsewhere.url, authValue: '' });
    expect(moved.status).toBe(200);
    expect(moved.body.data).toMatchObject({ url: elsewhere.url, hasAuth: false, authHeaderName: null, authValueHint: null });
    expect(await sentOnRefresh(path)).toEqual({ home: new Set(), elsewhere: new Set([undefined]) });
  });

  it('keeps the credential on a path-only change of the same origin, and lets a server without secrets move freely', async () => {
    const path = await register();
    const samePlace = home.url.replace(/\/mcp$/, '/mcp-v2');
    const moved = await change(path, { url: samePlace });
    expect(moved.status).toBe(200);
    expect(moved.body.data).toMatchObject({ url: samePlace, hasAuth: true, authValueHint: '0001' });
    expect(await sentOnRefresh(path)).toEqual({ home: new Set([SECRET]), elsewhere: new Set() });

    const plain = await register({});
    expect((await change(plain, { url: elsewhere.url })).status).toBe(200);
    expect(await sentOnRefresh(plain)).toEqual({ home: new Set(), elsewhere: new Set([undefined]) });
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
    expect(await sentOnRefresh(path)).toEqual({ home: new Set([ADMIN_HEADER_SECRET]), elsewhere: new Set() });

    // Within the same origin the team still changes the path.
    const samePlace = home.url.replace(/\/mcp$/, '/mcp-v3');
    expect((await change(path, { url: samePlace })).status).toBe(200);
    expect(await sentOnRefresh(path)).toEqual({ home: new Set([ADMIN_HEADER_SECRET]), elsewhere: new Set() });
  });
});
