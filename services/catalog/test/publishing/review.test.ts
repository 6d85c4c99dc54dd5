import { adminClient, itOnRealInfrastructure, newPerson, newTeam, startTestPlatform, type ApiClient, type TestPerson, type TestPlatform } from '@platform/test';
import { startUpstream, type Upstream } from '../capabilities/upstream';
import {
  adminApprovalPath,
  auditEntries,
  capabilitiesOf,
  outboxEventsOf,
  registerDiscoveredServer,
  reviewPath,
  serverPath,
  teamApprovalPath,
} from './support';

const TOOLS = [
  { name: 'search', description: 'Search the web' },
  { name: 'fetch', description: 'Fetch a page' },
];

/**
 * Publishing under the platform default `approval_required` (issue 5, spec §3, ops 2 and 8) through the real edge,
 * with an SDK McpServer upstream so that the server has capabilities to approve.
 */
describe('Publishing with review (approval_required)', () => {
  let platform: TestPlatform;
  let upstream: Upstream;
  let admin: ApiClient;
  let adminName: string;
  let owner: TestPerson;
  let member: TestPerson;
  let outsider: TestPerson;
  let team: string;
  let serverId: string;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' } });
    upstream = await startUpstream('X-Unused');
    upstream.state.tools = [...TOOLS];
    admin = await adminClient(platform);
    adminName = (await admin.get('/v1/me')).body.data.person.displayName;
    owner = await newPerson(platform, admin, 'Olivia Owner');
    member = await newPerson(platform, admin, 'member');
    outsider = await newPerson(platform, admin, 'outsider');
    team = await newTeam(admin, owner, [[member, 'member']]);
    serverId = await registerDiscoveredServer(owner.client, team, upstream.url);
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
    await upstream?.close();
  });

  const server = async () => (await owner.client.get(serverPath(team, serverId))).body.data;
  const catalogIds = async () => ((await member.client.get(`/v1/teams/${team}/catalog`)).body.data as { id: string }[]).map((item) => item.id);
  const publish = (who: TestPerson, body: Record<string, unknown> = {}, id = serverId) => who.client.post(`${serverPath(team, id)}/publish`, body);
  /** The server's catalog outbox events, in the tests that run on real Postgres only (itOnRealInfrastructure). */
  const outboxEvents = async (id = serverId) => {
    const events = await outboxEventsOf(platform, id);
    if (!events) throw new Error('the outbox can only be read on real Postgres');
    return events;
  };

  it('shows a discovered draft server with its counts, pending changes, refresh time and effective policy', async () => {
    const data = await server();
    expect(data).toMatchObject({
      publishState: 'draft',
      effectivePublishPolicy: 'approval_required',
      counts: { tools: 2, resources: 1, resourceTemplates: 1, prompts: 1 },
      pendingChanges: 5,
      lastRefreshError: null,
      publishRequestedAt: null,
      publishRequestNote: null,
      publishReviewedAt: null,
      publishReviewedByName: null,
      publishReviewNote: null,
    });
    expect(Date.parse(data.refreshedAt)).not.toBeNaN();
    // The list shows the same view.
    const listed = (await member.client.get(`/v1/teams/${team}/mcp-servers`)).body.data.find((item: { id: string }) => item.id === serverId);
    expect(listed).toEqual(data);
  });

  it('refuses members (403), outsiders (404), unknown servers (404) and bad notes (400), changing nothing', async () => {
    const before = await server();
    expect((await publish(member)).status).toBe(403);
    expect((await publish(outsider)).status).toBe(404);
    expect((await publish(owner, {}, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    const tooLong = await publish(owner, { note: 'x'.repeat(2001) });
    expect([tooLong.status, tooLong.body.error.code]).toEqual([400, 'invalid_request']);
    expect((await publish(owner, { note: 'ok', extra: true })).status).toBe(400);
    expect(await server()).toEqual(before);
  });

  it('refuses op 8 on the team route under approval_required (403 approval_required), changing nothing', async () => {
    const search = (await capabilitiesOf(owner.client, team, serverId)).get('tool:search')!;
    const refused = await owner.client.put(teamApprovalPath(team, serverId, search.id));
    expect([refused.status, refused.body.error.code]).toEqual([403, 'approval_required']);
    expect((await capabilitiesOf(owner.client, team, serverId)).get('tool:search')).toEqual(search);
    // An unknown capability is 404 whatever the policy.
    expect((await owner.client.put(teamApprovalPath(team, serverId, '00000000-0000-4000-8000-000000000000'))).status).toBe(404);
  });

  it('makes a publication request pending with its time and note; a second request is 409 invalid_state', async () => {
    const requested = await publish(owner, { note: 'Ready for everyone' });
    expect(requested.status).toBe(200);
    expect(await catalogIds()).not.toContain(serverId);
    expect(requested.body.data).toMatchObject({ publishState: 'pending', publishRequestNote: 'Ready for everyone', pendingChanges: 5 });
    expect(Date.parse(requested.body.data.publishRequestedAt)).not.toBeNaN();
    expect(requested.headers.get('etag')).toBe(`"${requested.body.data.revision}"`);

    const again = await publish(owner);
    expect([again.status, again.body.error.code]).toEqual([409, 'invalid_state']);
    expect((await server()).revision).toBe(requested.body.data.revision);

    const [entry] = await auditEntries(owner.client, team, 'mcp_server.publish_request', serverId);
    expect(entry).toMatchObject({
      before: { publishState: 'draft' },
      after: { publishState: 'pending' },
      metadata: { policy: 'approval_required', note: 'Ready for everyone' },
      actor: { userId: owner.id },
    });
  });

  itOnRealInfrastructure('puts the publication request, with its note, in the outbox', async () => {
    const events = await outboxEvents();
    expect(events.map((event) => event.type)).toEqual(['mcp_server.publish_requested']);
    expect(events[0]!.data).toMatchObject({ serverId, note: 'Ready for everyone' });
  });

  it('lets only platform admins review, and refuses an unknown decision, changing nothing', async () => {
    const before = await server();
    expect((await owner.client.post(reviewPath(serverId), { decision: 'approve' })).status).toBe(403);
    const bad = await admin.post(reviewPath(serverId), { decision: 'maybe' });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'invalid_request']);
    expect((await admin.post(reviewPath(serverId), {})).status).toBe(400);
    expect((await admin.post(reviewPath('00000000-0000-4000-8000-000000000000'), { decision: 'approve' })).status).toBe(404);
    expect(await server()).toEqual(before);
  });

  it('approves a pending server: published, its present capabilities approved by the reviewer; approving again is 409', async () => {
    const approved = await admin.post(reviewPath(serverId), { decision: 'approve', note: 'Looks good' });
    expect(approved.status).toBe(200);
    expect(approved.body.data).toMatchObject({
      id: serverId,
      teamSlug: team,
      publishState: 'published',
      publishReviewedByName: adminName,
      publishReviewNote: 'Looks good',
      publishRequestNote: 'Ready for everyone',
      pendingChanges: 0,
    });
    expect(Date.parse(approved.body.data.publishReviewedAt)).not.toBeNaN();
    const capabilities = [...(await capabilitiesOf(owner.client, team, serverId)).values()];
    expect(capabilities).toHaveLength(5);
    for (const capability of capabilities) {
      expect(capability).toMatchObject({ approved: true, changed: false, approvedByName: adminName });
      expect(Date.parse(capability.approvedAt!)).not.toBeNaN();
    }

    const again = await admin.post(reviewPath(serverId), { decision: 'approve' });
    expect([again.status, again.body.error.code]).toEqual([409, 'invalid_state']);
    expect(await catalogIds()).toContain(serverId);

    const [entry] = await auditEntries(owner.client, team, 'mcp_server.review', serverId);
    expect(entry).toMatchObject({
      before: { publishState: 'pending' },
      after: { publishState: 'published' },
      metadata: { decision: 'approve', note: 'Looks good', approvedCapabilities: 5 },
    });
  });

  itOnRealInfrastructure('puts the publication after the request in the outbox', async () => {
    expect((await outboxEvents()).map((event) => event.type)).toEqual(['mcp_server.publish_requested', 'mcp_server.published']);
  });

  it('shows a changed definition as changed and pending until a platform admin approves it; then 409 not_changed', async () => {
    upstream.state.tools = [{ name: 'search', description: 'Search the whole web' }, TOOLS[1]!];
    expect((await owner.client.post(`${serverPath(team, serverId)}/refresh`)).status).toBe(200);
    const search = (await capabilitiesOf(owner.client, team, serverId)).get('tool:search')!;
    expect(search).toMatchObject({ approved: false, changed: true, description: 'Search the whole web' });
    expect((await server()).pendingChanges).toBe(1);

    const refused = await owner.client.put(teamApprovalPath(team, serverId, search.id));
    expect([refused.status, refused.body.error.code]).toEqual([403, 'approval_required']);
    expect((await owner.client.put(adminApprovalPath(serverId, search.id))).status).toBe(403);

    const approved = await admin.put(adminApprovalPath(serverId, search.id));
    expect(approved.status).toBe(200);
    expect(approved.body.data).toMatchObject({ id: search.id, approved: true, changed: false, fingerprint: search.fingerprint, approvedByName: adminName });
    expect((await server()).pendingChanges).toBe(0);

    const again = await admin.put(adminApprovalPath(serverId, search.id));
    expect([again.status, again.body.error.code]).toEqual([409, 'not_changed']);

    const [entry] = await auditEntries(owner.client, team, 'capability.approve', search.id);
    expect(entry).toMatchObject({
      targetType: 'capability',
      after: { approvedFingerprint: search.fingerprint },
      metadata: { kind: 'tool', name: 'search', changed: true, asPlatformAdmin: true },
      parent: { type: 'mcp_server', id: serverId },
    });
    expect(entry.before!.approvedFingerprint).not.toBe(search.fingerprint);
  });

  it('refuses to approve a capability gone upstream (409 capability_gone) and counts only present ones', async () => {
    upstream.state.tools = [{ name: 'search', description: 'Search the whole web' }];
    expect((await owner.client.post(`${serverPath(team, serverId)}/refresh`)).status).toBe(200);
    const fetch = (await capabilitiesOf(owner.client, team, serverId)).get('tool:fetch')!;
    expect(fetch.goneAt).not.toBeNull();
    const gone = await admin.put(adminApprovalPath(serverId, fetch.id));
    expect([gone.status, gone.body.error.code]).toEqual([409, 'capability_gone']);
    expect(await server()).toMatchObject({ counts: { tools: 1, resources: 1, resourceTemplates: 1, prompts: 1 }, pendingChanges: 0 });
  });

  it('rejects a published server (it leaves the catalog); rejecting or approving a rejected one is 409 invalid_state', async () => {
    const rejected = await admin.post(reviewPath(serverId), { decision: 'reject', note: 'Misbehaves' });
    expect(rejected.status).toBe(200);
    expect(rejected.body.data).toMatchObject({ publishState: 'rejected', publishReviewNote: 'Misbehaves', publishReviewedByName: adminName });
    expect(await catalogIds()).not.toContain(serverId);
    for (const decision of ['reject', 'approve']) {
      const refused = await admin.post(reviewPath(serverId), { decision });
      expect([refused.status, refused.body.error.code]).toEqual([409, 'invalid_state']);
    }
    const entries = await auditEntries(owner.client, team, 'mcp_server.review', serverId, 2);
    expect(entries[0]).toMatchObject({ before: { publishState: 'published' }, after: { publishState: 'rejected' }, metadata: { decision: 'reject' } });
  });

  itOnRealInfrastructure('puts the rejection, with its note and that the server was published, last in the outbox', async () => {
    expect((await outboxEvents()).at(-1)).toMatchObject({ type: 'mcp_server.rejected', data: { wasPublished: true, note: 'Misbehaves' } });
  });

  it('makes a new request after a rejection pending again, without the old review', async () => {
    const requested = await publish(owner);
    expect(requested.body.data).toMatchObject({ publishState: 'pending', publishRequestNote: null, publishReviewNote: null, publishReviewedByName: null });
  });

  it('rejects a pending server; a draft one cannot be reviewed', async () => {
    const draftId = await registerDiscoveredServer(owner.client, team, upstream.url);
    for (const decision of ['approve', 'reject']) {
      const refused = await admin.post(reviewPath(draftId), { decision });
      expect([refused.status, refused.body.error.code]).toEqual([409, 'invalid_state']);
    }
    expect((await publish(owner, {}, draftId)).body.data.publishState).toBe('pending');
    const rejected = await admin.post(reviewPath(draftId), { decision: 'reject' });
    expect(rejected.body.data).toMatchObject({ publishState: 'rejected', publishReviewNote: null });
    // Rejecting never approves anything (of the search tool, the resource, the template and the prompt it found).
    const capabilities = [...(await capabilitiesOf(owner.client, team, draftId)).values()];
    expect(capabilities).toHaveLength(4);
    for (const capability of capabilities) expect(capability.approved).toBe(false);
  });

  it('publishes a platform server directly (platform admins manage it); other teams\' people cannot', async () => {
    upstream.state.tools = [...TOOLS];
    const secret = 'platform-upstream-credential-9876';
    const created = await admin.post('/v1/teams/platform/mcp-servers', { name: 'Shared', slug: `shared-${serverId.slice(0, 8)}`, url: upstream.url, authValue: secret });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    expect(created.body.data.effectivePublishPolicy).toBe('self_publish');
    expect((await admin.post(`${serverPath('platform', id)}/refresh`)).status).toBe(200);
    expect((await owner.client.post(`${serverPath('platform', id)}/publish`, {})).status).toBe(404);

    const published = await admin.post(`${serverPath('platform', id)}/publish`, {});
    expect(published.body.data).toMatchObject({ publishState: 'published', teamSlug: 'platform', pendingChanges: 0 });
    const [entry] = await auditEntries(admin, 'platform', 'mcp_server.publish', id);
    expect(entry.metadata).toMatchObject({ policy: 'self_publish', approvedCapabilities: 5 });
    expect(JSON.stringify([published.body, entry])).not.toContain(secret);
  });

  it('refuses to publish on an archived team (409 team_archived)', async () => {
    const archivedTeam = await newTeam(admin, owner);
    const id = await registerDiscoveredServer(owner.client, archivedTeam, upstream.url);
    const revision = (await owner.client.get(`/v1/teams/${archivedTeam}`)).body.data.revision;
    expect((await owner.client.patch(`/v1/teams/${archivedTeam}`, { archived: true }, { 'if-match': `"${revision}"` })).status).toBe(200);
    const refused = await owner.client.post(`${serverPath(archivedTeam, id)}/publish`, {});
    expect([refused.status, refused.body.error.code]).toEqual([409, 'team_archived']);
    expect((await owner.client.get(serverPath(archivedTeam, id))).body.data.publishState).toBe('draft');
  });
});
