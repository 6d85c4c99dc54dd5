import { adminClient, newPerson, newTeam, startTestPlatform, unique, type ApiClient, type ApiResponse, type TestPerson, type TestPlatform } from '@platform/test';
import { startUpstream, type Upstream } from '../capabilities/upstream';
import { capabilitiesOf, registerDiscoveredServer, serverPath, teamApprovalPath } from '../publishing/support';

/**
 * An archived team's catalog (docs/catalog.md, Archived teams): every change the team itself asks for is 409
 * team_archived and changes nothing, while its servers and gateways stay readable; unarchived, the same changes go
 * through. Runs under self_publish so publishing and the team's approval route are open to the owner.
 */
describe('catalog of an archived team', () => {
  let platform: TestPlatform;
  let upstream: Upstream;
  let admin: ApiClient;
  let owner: TestPerson;
  let team: string;
  let serverId: string;
  let gatewayId: string;
  let capabilityId: string;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    upstream = await startUpstream('Authorization');
    upstream.state.tools = [{ name: 'search', description: 'Search the web' }];
    admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
    serverId = await registerDiscoveredServer(owner.client, team, upstream.url);
    capabilityId = (await capabilitiesOf(owner.client, team, serverId)).get('tool:search')!.id;
    const gateway = await owner.client.post(`/v1/teams/${team}/gateways`, { slug: unique('arch'), name: 'Tools', servers: [{ serverId }] });
    expect(gateway.status).toBe(201);
    gatewayId = gateway.body.data.id;
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
    await upstream?.close();
  });

  const setArchived = async (archived: boolean) => {
    const current = await admin.get(`/v1/teams/${team}`);
    const changed = await admin.patch(`/v1/teams/${team}`, { archived }, { 'if-match': current.headers.get('etag')! });
    expect(changed.status).toBe(200);
  };

  /** Everything the team's changes could touch, as the team reads it. */
  const snapshot = async () => ({
    server: (await owner.client.get(serverPath(team, serverId))).body.data,
    servers: (await owner.client.get(`/v1/teams/${team}/mcp-servers`)).body.data,
    capabilities: (await owner.client.get(`${serverPath(team, serverId)}/capabilities?includeGone=true`)).body.data,
    gateway: (await owner.client.get(`/v1/teams/${team}/gateways/${gatewayId}`)).body.data,
    gateways: (await owner.client.get(`/v1/teams/${team}/gateways`)).body.data,
  });

  /** Each change the team may ask for, given the current revisions. */
  const changes: [string, () => Promise<ApiResponse>][] = [
    ['register a server', () => owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: 'New', slug: unique('new'), url: upstream.url })],
    ['change a server', async () => owner.client.patch(serverPath(team, serverId), { name: 'Renamed' }, { 'if-match': `"${(await owner.client.get(serverPath(team, serverId))).body.data.revision}"` })],
    ['refresh a server', () => owner.client.post(`${serverPath(team, serverId)}/refresh`)],
    // Before publishing, which approves every present capability under self_publish.
    ['approve a capability', () => owner.client.put(teamApprovalPath(team, serverId, capabilityId))],
    ['publish a server', () => owner.client.post(`${serverPath(team, serverId)}/publish`, { note: 'please' })],
    ['create a gateway', () => owner.client.post(`/v1/teams/${team}/gateways`, { slug: unique('gw'), name: 'Another' })],
    ['change a gateway', async () => owner.client.patch(`/v1/teams/${team}/gateways/${gatewayId}`, { name: 'Renamed' }, { 'if-match': `"${(await owner.client.get(`/v1/teams/${team}/gateways/${gatewayId}`)).body.data.revision}"` })],
    ['delete a gateway', () => owner.client.delete(`/v1/teams/${team}/gateways/${gatewayId}`)],
    ['delete a server', () => owner.client.delete(serverPath(team, serverId))],
  ];

  it('refuses every change the team asks for with 409 team_archived, changing nothing, and still shows what it has', async () => {
    // A change to approve once the team is archived: the upstream redefines its tool.
    upstream.state.tools = [{ name: 'search', description: 'Search the whole web' }];
    expect((await owner.client.post(`${serverPath(team, serverId)}/refresh`)).status).toBe(200);
    await setArchived(true);
    const before = await snapshot();
    expect(before.server).toMatchObject({ id: serverId });
    expect(before.gateway).toMatchObject({ id: gatewayId });
    const refreshesBefore = upstream.state.seenCredentials.length;

    for (const [change, send] of changes) {
      const refused = await send();
      expect([change, refused.status, refused.body.error?.code]).toEqual([change, 409, 'team_archived']);
    }
    expect(await snapshot()).toEqual(before);
    // The refused refresh never reached the upstream.
    expect(upstream.state.seenCredentials.length).toBe(refreshesBefore);
  });

  it("refuses a platform admin's publishing override for it too (op 13), leaving the override and the revision as they were", async () => {
    const publishingPath = `/v1/admin/teams/${team}/publishing`;
    const before = await admin.get(publishingPath);
    expect(before.status).toBe(200);
    const refused = await admin.put(publishingPath, { override: 'approval_required' }, { 'if-match': before.headers.get('etag')! });
    expect([refused.status, refused.body.error?.code]).toEqual([409, 'team_archived']);
    const after = await admin.get(publishingPath);
    expect([after.body.data, after.headers.get('etag')]).toEqual([before.body.data, before.headers.get('etag')]);
  });

  it('lets the same changes through once the team is unarchived', async () => {
    await setArchived(false);
    for (const [change, send] of changes) {
      const accepted = await send();
      expect([change, accepted.status < 300, accepted.body?.error]).toEqual([change, true, undefined]);
    }
    expect((await owner.client.get(serverPath(team, serverId))).status).toBe(404);
    const publishing = await admin.get(`/v1/admin/teams/${team}/publishing`);
    const overridden = await admin.put(`/v1/admin/teams/${team}/publishing`, { override: 'approval_required' }, { 'if-match': publishing.headers.get('etag')! });
    expect([overridden.status, overridden.body.data?.override]).toEqual([200, 'approval_required']);
  });
});
