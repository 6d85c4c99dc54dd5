import { adminClient, itOnRealInfrastructure, newPerson, newTeam, startTestPlatform, type ApiClient, type TestPerson, type TestPlatform } from '@platform/test';
import { startUpstream, type Upstream } from '../capabilities/upstream';
import { auditEntries, capabilitiesOf, outboxEventsOf, registerDiscoveredServer, serverPath, teamApprovalPath } from './support';

const TOOLS = [
  { name: 'search', description: 'Search the web' },
  { name: 'fetch', description: 'Fetch a page' },
];

/**
 * Publishing under the platform default `self_publish` (MCP_PUBLISH_POLICY), team overrides (op 13) and the team's
 * own capability approvals (op 8), through the real edge with an SDK McpServer upstream.
 */
describe('Self-publishing and publishing overrides', () => {
  let platform: TestPlatform;
  let upstream: Upstream;
  let admin: ApiClient;
  let auditor: TestPerson;
  let owner: TestPerson;
  let teamAdmin: TestPerson;
  let member: TestPerson;
  let team: string;
  let serverId: string;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    upstream = await startUpstream('X-Unused');
    upstream.state.tools = [...TOOLS];
    admin = await adminClient(platform);
    auditor = await newPerson(platform, admin, 'auditor', 'auditor');
    owner = await newPerson(platform, admin, 'Olivia Owner');
    teamAdmin = await newPerson(platform, admin, 'Adam Admin');
    member = await newPerson(platform, admin, 'member');
    team = await newTeam(admin, owner, [
      [teamAdmin, 'admin'],
      [member, 'member'],
    ]);
    serverId = await registerDiscoveredServer(owner.client, team, upstream.url);
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
    await upstream?.close();
  });

  const publishing = (teamRef = team) => `/v1/admin/teams/${teamRef}/publishing`;
  const ifMatch = (revision: number) => ({ 'if-match': `"${revision}"` });
  const teamRevision = async () => (await admin.get(`/v1/teams/${team}`)).body.data.revision as number;
  const server = async (id = serverId) => (await owner.client.get(serverPath(team, id))).body.data;

  it('publishes directly under self_publish, approving the present capabilities as the publisher; again is 409', async () => {
    const published = await owner.client.post(`${serverPath(team, serverId)}/publish`, { note: 'Ours' });
    expect(published.status).toBe(200);
    expect(published.body.data).toMatchObject({
      publishState: 'published',
      effectivePublishPolicy: 'self_publish',
      publishRequestNote: 'Ours',
      publishReviewedByName: null,
      pendingChanges: 0,
      counts: { tools: 2, resources: 1, resourceTemplates: 1, prompts: 1 },
    });
    const capabilities = [...(await capabilitiesOf(owner.client, team, serverId)).values()];
    expect(capabilities).toHaveLength(5);
    for (const capability of capabilities) expect(capability).toMatchObject({ approved: true, changed: false, approvedByName: 'Olivia Owner' });

    const again = await owner.client.post(`${serverPath(team, serverId)}/publish`, {});
    expect([again.status, again.body.error.code]).toEqual([409, 'invalid_state']);

    const [entry] = await auditEntries(owner.client, team, 'mcp_server.publish', serverId);
    expect(entry).toMatchObject({
      before: { publishState: 'draft' },
      after: { publishState: 'published' },
      metadata: { policy: 'self_publish', approvedCapabilities: 5 },
    });
  });

  itOnRealInfrastructure('puts the publication, made via self_publish, in the outbox', async () => {
    const events = await outboxEventsOf(platform, serverId);
    expect(events).toMatchObject([{ type: 'mcp_server.published', data: { serverId, via: 'self_publish' } }]);
  });

  it('lets team owners and admins approve a changed capability (op 8); members 403; then 409 not_changed', async () => {
    upstream.state.tools = [{ name: 'search', description: 'Search the whole web' }, TOOLS[1]!];
    expect((await owner.client.post(`${serverPath(team, serverId)}/refresh`)).status).toBe(200);
    const search = (await capabilitiesOf(owner.client, team, serverId)).get('tool:search')!;
    expect(search).toMatchObject({ approved: false, changed: true });
    expect((await server()).pendingChanges).toBe(1);

    expect((await member.client.put(teamApprovalPath(team, serverId, search.id))).status).toBe(403);
    const approved = await teamAdmin.client.put(teamApprovalPath(team, serverId, search.id));
    expect(approved.status).toBe(200);
    expect(approved.body.data).toMatchObject({ id: search.id, approved: true, changed: false, approvedByName: 'Adam Admin' });
    expect((await server()).pendingChanges).toBe(0);

    const again = await owner.client.put(teamApprovalPath(team, serverId, search.id));
    expect([again.status, again.body.error.code]).toEqual([409, 'not_changed']);
    const [entry] = await auditEntries(owner.client, team, 'capability.approve', search.id);
    expect(entry).toMatchObject({ actor: { userId: teamAdmin.id }, metadata: { changed: true, asPlatformAdmin: false } });
  });

  it('approves a new capability once; a capability gone upstream is 409 capability_gone', async () => {
    upstream.state.tools = [{ name: 'search', description: 'Search the whole web' }, { name: 'translate', description: 'Translate text' }];
    expect((await owner.client.post(`${serverPath(team, serverId)}/refresh`)).status).toBe(200);
    const capabilities = await capabilitiesOf(owner.client, team, serverId);
    const translate = capabilities.get('tool:translate')!;
    expect(translate).toMatchObject({ approved: false, changed: true, approvedByName: null });
    expect((await server()).pendingChanges).toBe(1);
    expect((await owner.client.put(teamApprovalPath(team, serverId, translate.id))).body.data).toMatchObject({ approved: true, changed: false });
    expect((await server()).pendingChanges).toBe(0);

    const gone = await owner.client.put(teamApprovalPath(team, serverId, capabilities.get('tool:fetch')!.id));
    expect([gone.status, gone.body.error.code]).toEqual([409, 'capability_gone']);
    // Another server's capability is not found through this one.
    const otherId = await registerDiscoveredServer(owner.client, team, upstream.url);
    expect((await owner.client.put(teamApprovalPath(team, otherId, translate.id))).status).toBe(404);
  });

  it('reads a team\'s publishing override (op 13 shape) for platform admins and auditors only', async () => {
    const read = await auditor.client.get(publishing());
    expect(read.status).toBe(200);
    const revision = await teamRevision();
    expect(read.body.data).toEqual({ override: null, effective: 'self_publish', defaultPolicy: 'self_publish', revision });
    expect(read.headers.get('etag')).toBe(`"${revision}"`);
    expect((await owner.client.get(publishing())).status).toBe(403);
    expect((await admin.get(publishing('no-such-team'))).status).toBe(404);
    expect((await admin.get(publishing('platform'))).body.data).toMatchObject({ override: null, effective: 'self_publish' });
  });

  it('refuses bad override changes with 428, 412, 400, 403 and 404, changing nothing', async () => {
    const revision = await teamRevision();
    const missing = await admin.put(publishing(), { override: 'approval_required' });
    expect([missing.status, missing.body.error.code]).toEqual([428, 'precondition_required']);
    const stale = await admin.put(publishing(), { override: 'approval_required' }, ifMatch(revision + 1));
    expect([stale.status, stale.body.error.code]).toEqual([412, 'precondition_failed']);
    const unknown = await admin.put(publishing(), { override: 'anything_goes' }, ifMatch(revision));
    expect([unknown.status, unknown.body.error.code, unknown.body.error.fields?.[0]?.field]).toEqual([400, 'invalid_request', 'override']);
    expect((await admin.put(publishing(), {}, ifMatch(revision))).status).toBe(400);
    // An auditor sees every team but may not change this: 403 (404 is for teams the caller cannot see).
    expect((await auditor.client.put(publishing(), { override: 'approval_required' }, ifMatch(revision))).status).toBe(403);
    expect((await owner.client.put(publishing(), { override: 'approval_required' }, ifMatch(revision))).status).toBe(403);
    expect((await admin.put(publishing('no-such-team'), { override: 'approval_required' }, ifMatch(1))).status).toBe(404);

    const platformRevision = (await admin.get(publishing('platform'))).body.data.revision;
    const platformTeam = await admin.put(publishing('platform'), { override: 'approval_required' }, ifMatch(platformRevision));
    expect([platformTeam.status, platformTeam.body.error.fields?.[0]?.field]).toEqual([400, 'override']);
    expect(platformTeam.body.error.message).toEqual(expect.any(String));
    expect((await admin.get(publishing('platform'))).body.data).toMatchObject({ override: null, revision: platformRevision });

    expect((await admin.get(publishing())).body.data).toEqual({ override: null, effective: 'self_publish', defaultPolicy: 'self_publish', revision });
  });

  it('sets an override (team revision moves on, audited) that governs publishing and op 8; clearing restores the default', async () => {
    const revision = await teamRevision();
    const set = await admin.put(publishing(), { override: 'approval_required' }, ifMatch(revision));
    expect(set.status).toBe(200);
    expect(set.body.data).toEqual({ override: 'approval_required', effective: 'approval_required', defaultPolicy: 'self_publish', revision: revision + 1 });
    expect(set.headers.get('etag')).toBe(`"${revision + 1}"`);
    expect(await teamRevision()).toBe(revision + 1);
    // Setting what is already set changes nothing.
    expect((await admin.put(publishing(), { override: 'approval_required' }, ifMatch(revision + 1))).body.data.revision).toBe(revision + 1);

    const teamId = (await admin.get(`/v1/teams/${team}`)).body.data.id;
    const [entry] = await auditEntries(owner.client, team, 'team.publishing_override_update', teamId);
    expect(entry).toMatchObject({ targetType: 'team', before: { override: null }, after: { override: 'approval_required' } });

    // Now a request waits for review, and the team cannot approve capability changes.
    const draftId = await registerDiscoveredServer(owner.client, team, upstream.url);
    expect(await server(draftId)).toMatchObject({ effectivePublishPolicy: 'approval_required', publishState: 'draft' });
    expect((await owner.client.post(`${serverPath(team, draftId)}/publish`, {})).body.data.publishState).toBe('pending');
    const search = (await capabilitiesOf(owner.client, team, draftId)).get('tool:search')!;
    const refused = await owner.client.put(teamApprovalPath(team, draftId, search.id));
    expect([refused.status, refused.body.error.code]).toEqual([403, 'approval_required']);

    // Cleared: the default applies again, and the pending server is published directly on the next request.
    const cleared = await admin.put(publishing(), { override: null }, ifMatch(revision + 1));
    expect(cleared.body.data).toEqual({ override: null, effective: 'self_publish', defaultPolicy: 'self_publish', revision: revision + 2 });
    const published = await owner.client.post(`${serverPath(team, draftId)}/publish`, {});
    expect(published.body.data).toMatchObject({ publishState: 'published', effectivePublishPolicy: 'self_publish', pendingChanges: 0 });
    const entries = await auditEntries(owner.client, team, 'team.publishing_override_update', teamId, 2);
    expect(entries[0]).toMatchObject({ before: { override: 'approval_required' }, after: { override: null } });
  });
});
