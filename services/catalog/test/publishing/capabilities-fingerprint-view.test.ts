import {
  adminClient,
  eventually,
  newPerson,
  newTeam,
  openApiProblems,
  startTestPlatform,
  unique,
  type ApiClient,
  type TestPerson,
  type TestPlatform,
} from '@platform/test';
import { startUpstream, type Upstream } from '../capabilities/upstream';
import { adminApprovalPath, capabilitiesOf, FETCH, REDEFINED_SEARCH, registerDiscoveredServer, SEARCH, serverPath, TRANSLATE } from './support';


/**
 * The server view's `capabilitiesFingerprint` (docs/catalog.md, Publishing and approvals: Server view): a digest of
 * the present capabilities that moves when discovery stores a new, redefined or gone one, and never otherwise (a
 * refresh that finds nothing new, health checks, approvals). Health checks run every second so that health moves.
 */
describe('the MCP server view\'s capabilitiesFingerprint', () => {
  let platform: TestPlatform;
  let upstream: Upstream;
  let admin: ApiClient;
  let owner: TestPerson;
  let team: string;
  let serverId: string;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_HEALTH_CHECK_SECONDS: '1', MCP_REFRESH_SECONDS: '0' } });
    upstream = await startUpstream('X-Unused');
    upstream.state.tools = [SEARCH, FETCH];
    admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
    serverId = await registerDiscoveredServer(owner.client, team, upstream.url);
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
    await upstream?.close();
  });

  const server = async () => (await owner.client.get(serverPath(team, serverId))).body.data;
  const fingerprint = async () => (await server()).capabilitiesFingerprint as string;
  /** The upstream lists `tools` from now on, and a refresh stores what it lists; answers the view's value after. */
  async function refreshWith(tools: Upstream['state']['tools']): Promise<string> {
    upstream.state.tools = tools;
    expect((await owner.client.post(`${serverPath(team, serverId)}/refresh`)).status).toBe(200);
    return fingerprint();
  }

  it('is a hex digest, the same in the team view, the team list and the platform admin view', async () => {
    const value = await fingerprint();
    expect(value).toMatch(/^[0-9a-f]{64}$/);
    const listed = (await owner.client.get(`/v1/teams/${team}/mcp-servers`)).body.data.find((item: { id: string }) => item.id === serverId);
    expect(listed.capabilitiesFingerprint).toBe(value);
    expect((await admin.get(`/v1/admin/mcp-servers/${serverId}`)).body.data.capabilitiesFingerprint).toBe(value);
  });

  it('stays when only the refresh time, health or approvals move', async () => {
    const before = await server();
    expect(await refreshWith([SEARCH, FETCH])).toBe(before.capabilitiesFingerprint);
    expect((await server()).refreshedAt).not.toBe(before.refreshedAt);

    const checked = await eventually(server, (now) => now.health.checkedAt !== null && now.health.checkedAt !== before.health.checkedAt, 60_000);
    expect(checked.capabilitiesFingerprint).toBe(before.capabilitiesFingerprint);

    const search = (await capabilitiesOf(owner.client, team, serverId)).get('tool:search')!;
    expect((await admin.put(adminApprovalPath(serverId, search.id))).status).toBe(200);
    expect(await server()).toMatchObject({ pendingChanges: before.pendingChanges - 1, capabilitiesFingerprint: before.capabilitiesFingerprint });
  });

  it('changes when a capability is added, redefined or gone, and is a function of the present set alone', async () => {
    const original = await fingerprint();
    const added = await refreshWith([SEARCH, FETCH, TRANSLATE]);
    expect(added).not.toBe(original);
    const redefined = await refreshWith([REDEFINED_SEARCH, FETCH, TRANSLATE]);
    expect(redefined).not.toBe(added);
    const gone = await refreshWith([REDEFINED_SEARCH, FETCH]);
    expect(new Set([original, added, redefined, gone]).size).toBe(4);
    // The set read at first, offered again: the same capabilities, so the same value.
    expect(await refreshWith([SEARCH, FETCH])).toBe(original);
  });

  it('is documented: in both server views, and as the publish and review routes\' body field with their 412', async () => {
    const document = (await owner.client.get('/v1/openapi.json')).body;
    expect(await openApiProblems(document)).toEqual([]);
    const { McpServer: teamView, AdminMcpServer: adminView } = document.components.schemas;
    for (const view of [teamView, adminView]) {
      expect(view.properties.capabilitiesFingerprint).toMatchObject({ type: 'string' });
      expect(view.required).toContain('capabilitiesFingerprint');
    }
    for (const path of ['/v1/teams/{team}/mcp-servers/{serverId}/publish', '/v1/admin/mcp-servers/{serverId}/review']) {
      const operation = document.paths[path].post;
      const body = operation.requestBody.content['application/json'].schema;
      expect(body.properties.capabilitiesFingerprint).toMatchObject({ type: 'string', maxLength: 128 });
      expect(body.required ?? []).not.toContain('capabilitiesFingerprint');
      expect(operation.responses['412'].description).toMatch(/capabilitiesFingerprint/);
    }
  });

  it('names the empty set for a server not yet discovered, in the create answer as in later reads', async () => {
    const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: 'Fresh', slug: unique('fresh'), url: upstream.url, timeoutSeconds: 5 });
    expect(created.status).toBe(201);
    expect(created.body.data.capabilitiesFingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(created.body.data.capabilitiesFingerprint).not.toBe(await fingerprint());
    expect((await owner.client.get(serverPath(team, created.body.data.id))).body.data.capabilitiesFingerprint).toBe(created.body.data.capabilitiesFingerprint);
  });
});
