import { adminClient, newPerson, newTeam, startTestPlatform, type ApiClient, type TestPerson, type TestPlatform } from '@platform/test';
import { startUpstream, type Upstream } from '../capabilities/upstream';
import { adminChange, adminPath, PLATFORM_TEAM, registerServer, type AdminServerJson } from './support';

const HEADER = 'X-Upstream-Key';
const TEAM_SECRET = 'Bearer team-credential-secret-1111';
const HEADER_SECRET = 'platform-header-secret-2222';
const NEW_HEADER_SECRET = 'platform-header-secret-3333';

/**
 * Op 16 moves a server to another origin (here: another port of 127.0.0.1) only when no stored secret goes along
 * ungiven: the admin's headers are given again or removed, and a team's credential, which the admin cannot give,
 * blocks the move until the team clears it.
 */
describe('op 16: stored secrets stay with their origin', () => {
  let platform: TestPlatform;
  let admin: ApiClient;
  let platformAdmin: TestPerson;
  let owner: TestPerson;
  let team: string;
  let home: Upstream;
  let elsewhere: Upstream;

  beforeAll(async () => {
    // Health checks and scheduled refreshes stay off (the test platform's default): only the test's refreshes reach the upstreams.
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' } });
    home = await startUpstream(HEADER);
    elsewhere = await startUpstream(HEADER);
    admin = await adminClient(platform);
    platformAdmin = await newPerson(platform, admin, 'platform-admin', 'admin');
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
    await home?.close();
    await elsewhere?.close();
  });

  const read = async (serverId: string): Promise<AdminServerJson> => (await platformAdmin.client.get(adminPath(serverId))).body.data;
  /** What a refresh (through the owning team's route) sends each upstream in the credential header. */
  async function sentOnRefresh(client: ApiClient, teamRef: string, serverId: string) {
    home.state.seenCredentials = [];
    elsewhere.state.seenCredentials = [];
    expect((await client.post(`/v1/teams/${teamRef}/mcp-servers/${serverId}/refresh`)).status).toBe(200);
    return { home: new Set(home.state.seenCredentials), elsewhere: new Set(elsewhere.state.seenCredentials) };
  }
  const refusedFields = (response: { status: number; body: { error?: { code: string; fields?: { field: string }[] } } }) => [
    response.status,
    response.body.error?.code,
    response.body.error?.fields?.map((f) => f.field),
  ];

  it("refuses moving a team's server that holds the team's credential (400 naming url); the team clears it, then the move is allowed", async () => {
    const server = await registerServer(owner.client, team, { url: home.url, authHeaderName: HEADER, authValue: TEAM_SECRET });
    const before = await read(server.id);
    for (const body of [{ url: elsewhere.url }, { url: elsewhere.url, name: 'Moved', enabled: false }]) {
      const refused = await adminChange(platformAdmin.client, server.id, body);
      expect(refusedFields(refused)).toEqual([400, 'invalid_request', ['url']]);
      expect(refused.body.error.fields[0].problem).toMatch(/team's stored credential/);
      expect(JSON.stringify(refused.body)).not.toContain('team-credential-secret');
    }
    expect(await read(server.id)).toEqual(before);
    expect(before).toMatchObject({ url: home.url, revision: 1, hasHeaders: true });
    expect(await sentOnRefresh(owner.client, team, server.id)).toEqual({ home: new Set([TEAM_SECRET]), elsewhere: new Set() });

    // A path on the same origin is no move.
    const samePlace = home.url.replace(/\/mcp$/, '/mcp-v2');
    expect((await adminChange(platformAdmin.client, server.id, { url: samePlace })).status).toBe(200);
    expect(await sentOnRefresh(owner.client, team, server.id)).toEqual({ home: new Set([TEAM_SECRET]), elsewhere: new Set() });

    const cleared = await owner.client.patch(`/v1/teams/${team}/mcp-servers/${server.id}`, { authValue: '' }, { 'if-match': `"${(await read(server.id)).revision}"` });
    expect(cleared.status).toBe(200);
    const moved = await adminChange(platformAdmin.client, server.id, { url: elsewhere.url });
    expect(moved.status).toBe(200);
    expect(moved.body.data).toMatchObject({ url: elsewhere.url, hasHeaders: false });
    expect(await sentOnRefresh(owner.client, team, server.id)).toEqual({ home: new Set(), elsewhere: new Set([undefined]) });
  });

  it("moves a team's server when the same change replaces the headers (which removes the team's credential): only the new headers go there", async () => {
    const server = await registerServer(owner.client, team, { url: home.url, authHeaderName: HEADER, authValue: TEAM_SECRET });
    const moved = await adminChange(platformAdmin.client, server.id, { url: elsewhere.url, headers: { [HEADER]: HEADER_SECRET } });
    expect(moved.status).toBe(200);
    expect(await sentOnRefresh(owner.client, team, server.id)).toEqual({ home: new Set(), elsewhere: new Set([HEADER_SECRET]) });
  });

  it('refuses moving a server with stored headers unless they are given again (400 naming headers); {} removes them', async () => {
    const server = await registerServer(platformAdmin.client, PLATFORM_TEAM, { url: home.url });
    expect((await adminChange(platformAdmin.client, server.id, { headers: { [HEADER]: HEADER_SECRET } })).status).toBe(200);
    const before = await read(server.id);
    const refused = await adminChange(platformAdmin.client, server.id, { url: elsewhere.url });
    expect(refusedFields(refused)).toEqual([400, 'invalid_request', ['headers']]);
    expect(JSON.stringify(refused.body)).not.toContain('platform-header-secret');
    expect(await read(server.id)).toEqual(before);
    expect(await sentOnRefresh(platformAdmin.client, PLATFORM_TEAM, server.id)).toEqual({ home: new Set([HEADER_SECRET]), elsewhere: new Set() });

    const moved = await adminChange(platformAdmin.client, server.id, { url: elsewhere.url, headers: { [HEADER]: NEW_HEADER_SECRET } });
    expect(moved.status).toBe(200);
    expect(await sentOnRefresh(platformAdmin.client, PLATFORM_TEAM, server.id)).toEqual({ home: new Set(), elsewhere: new Set([NEW_HEADER_SECRET]) });

    const back = await adminChange(platformAdmin.client, server.id, { url: home.url, headers: {} });
    expect(back.status).toBe(200);
    expect(back.body.data).toMatchObject({ url: home.url, hasHeaders: false });
    expect(await sentOnRefresh(platformAdmin.client, PLATFORM_TEAM, server.id)).toEqual({ home: new Set([undefined]), elsewhere: new Set() });
  });

  it("refuses moving a platform server whose credential was stored through the platform team's route (400 naming url)", async () => {
    const server = await registerServer(platformAdmin.client, PLATFORM_TEAM, { url: home.url, authHeaderName: HEADER, authValue: TEAM_SECRET });
    const refused = await adminChange(platformAdmin.client, server.id, { url: elsewhere.url });
    expect(refusedFields(refused)).toEqual([400, 'invalid_request', ['url']]);
    expect(await read(server.id)).toMatchObject({ url: home.url, revision: 1 });
    // The platform team's route moves it with the credential given again.
    const moved = await platformAdmin.client.patch(
      `/v1/teams/${PLATFORM_TEAM}/mcp-servers/${server.id}`,
      { url: elsewhere.url, authValue: TEAM_SECRET },
      { 'if-match': '"1"' },
    );
    expect(moved.status).toBe(200);
    expect(await sentOnRefresh(platformAdmin.client, PLATFORM_TEAM, server.id)).toEqual({ home: new Set(), elsewhere: new Set([TEAM_SECRET]) });
  });
});
