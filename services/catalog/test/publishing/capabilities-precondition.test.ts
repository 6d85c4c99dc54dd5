import type { Client } from 'pg';
import {
  adminClient,
  databaseOf,
  describeWith,
  newPerson,
  newTeam,
  startTestPlatform,
  type ApiClient,
  type ApiResponse,
  type TestPerson,
  type TestPlatform,
} from '@platform/test';
import { startUpstream, type Upstream } from '../capabilities/upstream';
import { outboxMarks, writtenSince } from '../validation/written';
import { auditEntries, capabilitiesOf, FETCH, REDEFINED_SEARCH, registerDiscoveredServer, reviewPath, SEARCH, serverPath } from './support';

const NUL = 'a\u0000b';

/**
 * Publishing and op 2's `approve` approve exactly the capabilities the approver saw (docs/catalog.md, Publishing and
 * approvals: the capabilities precondition): the optional body field `capabilitiesFingerprint`, the server view's
 * value as read, must still be the current one, else 412 `precondition_failed` and nothing changes. The platform
 * default is `approval_required`; `selfTeam` overrides it to `self_publish` (op 13). Background checks and discovery
 * are off, so only the tests' requests write to the outbox.
 */
describeWith('postgres', 'publishing and review approve the capabilities the approver saw (capabilitiesFingerprint)', () => {
  let platform: TestPlatform;
  let upstream: Upstream;
  let admin: ApiClient;
  let owner: TestPerson;
  /** Under the platform default, approval_required. */
  let team: string;
  /** Under its own override, self_publish. */
  let selfTeam: string;
  let db: Client;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_HEALTH_CHECK_SECONDS: '0', MCP_REFRESH_SECONDS: '0' } });
    upstream = await startUpstream('X-Unused');
    admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
    selfTeam = await newTeam(admin, owner);
    const etag = (await admin.get(`/v1/admin/teams/${selfTeam}/publishing`)).headers.get('etag')!;
    expect((await admin.put(`/v1/admin/teams/${selfTeam}/publishing`, { override: 'self_publish' }, { 'if-match': etag })).status).toBe(200);
    db = await databaseOf(platform, { required: true });
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await platform?.stop();
    await upstream?.close();
  });

  const server = async (teamRef: string, serverId: string) => (await owner.client.get(serverPath(teamRef, serverId))).body.data;
  /** A new server of the team on the upstream listing `tools`, discovered, and the fingerprint its view shows now. */
  async function discoveredServer(teamRef: string, tools = [SEARCH, FETCH]) {
    upstream.state.tools = tools;
    const serverId = await registerDiscoveredServer(owner.client, teamRef, upstream.url);
    const seen = (await server(teamRef, serverId)).capabilitiesFingerprint as string;
    expect(seen).toMatch(/^[0-9a-f]{64}$/);
    return { serverId, seen };
  }
  /** The upstream redefines `search`, and a refresh stores it: the fingerprint read before is stale. */
  async function redefineSearch(teamRef: string, serverId: string) {
    upstream.state.tools = [REDEFINED_SEARCH, FETCH];
    expect((await owner.client.post(`${serverPath(teamRef, serverId)}/refresh`)).status).toBe(200);
  }
  const publish = (teamRef: string, serverId: string, body: Record<string, unknown>) => owner.client.post(`${serverPath(teamRef, serverId)}/publish`, body);
  const review = (serverId: string, body: Record<string, unknown>) => admin.post(reviewPath(serverId), body);
  const approvedNames = async (teamRef: string, serverId: string) =>
    [...(await capabilitiesOf(owner.client, teamRef, serverId)).values()].filter((item) => item.approved).map((item) => `${item.kind}:${item.name}`).sort();

  /**
   * Sends a request that must be refused with `status` and `code` (and name `fields`), and checks it changed nothing:
   * the server's view and its capabilities read the same after, and no outbox row (audit entry or event) was added.
   */
  async function expectRefusedUnchanged(teamRef: string, serverId: string, send: () => Promise<ApiResponse>, status: number, code: string, fields?: string[]) {
    const before = { server: await server(teamRef, serverId), capabilities: await capabilitiesOf(owner.client, teamRef, serverId) };
    const marks = await outboxMarks(db);
    const answer = await send();
    expect([answer.status, answer.body?.error?.code]).toEqual([status, code]);
    if (fields) expect(((answer.body.error.fields ?? []) as { field: string }[]).map((item) => item.field)).toEqual(fields);
    expect(await writtenSince(db, marks, answer.headers.get('x-request-id') ?? '')).toEqual([]);
    expect({ server: await server(teamRef, serverId), capabilities: await capabilitiesOf(owner.client, teamRef, serverId) }).toEqual(before);
    return answer;
  }

  describe('publishing under self_publish', () => {
    it('with the current value: publishes, approves the capabilities, and audits the value checked', async () => {
      const { serverId, seen } = await discoveredServer(selfTeam);
      const published = await publish(selfTeam, serverId, { capabilitiesFingerprint: seen });
      expect(published.status).toBe(200);
      // Approving moves no capability's definition: the digest stays.
      expect(published.body.data).toMatchObject({ publishState: 'published', pendingChanges: 0, capabilitiesFingerprint: seen });
      expect(await approvedNames(selfTeam, serverId)).toEqual(['prompt:summarise', 'resource:file:///readme.md', 'resource_template:issues://{id}', 'tool:fetch', 'tool:search']);
      const [entry] = await auditEntries(owner.client, selfTeam, 'mcp_server.publish', serverId);
      expect(entry!.metadata).toMatchObject({ policy: 'self_publish', approvedCapabilities: 5, capabilitiesFingerprint: seen });
    });

    it('with a value read before a refresh redefined a tool: 412 and nothing changed; the new value publishes', async () => {
      const { serverId, seen } = await discoveredServer(selfTeam);
      await redefineSearch(selfTeam, serverId);
      const refused = await expectRefusedUnchanged(selfTeam, serverId, () => publish(selfTeam, serverId, { capabilitiesFingerprint: seen }), 412, 'precondition_failed');
      expect(refused.body.error.message).toMatch(/capabilities have changed since they were read/);
      expect((await server(selfTeam, serverId)).publishState).toBe('draft');
      expect(await approvedNames(selfTeam, serverId)).toEqual([]);

      const current = (await server(selfTeam, serverId)).capabilitiesFingerprint as string;
      expect(current).not.toBe(seen);
      expect((await publish(selfTeam, serverId, { capabilitiesFingerprint: current })).status).toBe(200);
      expect((await capabilitiesOf(owner.client, selfTeam, serverId)).get('tool:search')).toMatchObject({ description: REDEFINED_SEARCH.description, approved: true });
    });

    it('without the field: publishes and approves the capabilities as they are now, as before, and audits no value', async () => {
      const { serverId } = await discoveredServer(selfTeam);
      await redefineSearch(selfTeam, serverId);
      const published = await publish(selfTeam, serverId, { note: 'as it is' });
      expect(published.body.data).toMatchObject({ publishState: 'published', pendingChanges: 0 });
      expect((await capabilitiesOf(owner.client, selfTeam, serverId)).get('tool:search')).toMatchObject({ description: REDEFINED_SEARCH.description, approved: true });
      const [entry] = await auditEntries(owner.client, selfTeam, 'mcp_server.publish', serverId);
      expect(entry!.metadata).not.toHaveProperty('capabilitiesFingerprint');
    });

    it('checks the value before the state: a stale one on a published server is 412, the current one 409', async () => {
      const { serverId, seen } = await discoveredServer(selfTeam);
      expect((await publish(selfTeam, serverId, {})).status).toBe(200);
      await redefineSearch(selfTeam, serverId);
      await expectRefusedUnchanged(selfTeam, serverId, () => publish(selfTeam, serverId, { capabilitiesFingerprint: seen }), 412, 'precondition_failed');
      const current = (await server(selfTeam, serverId)).capabilitiesFingerprint as string;
      await expectRefusedUnchanged(selfTeam, serverId, () => publish(selfTeam, serverId, { capabilitiesFingerprint: current }), 409, 'invalid_state');
    });

    it.each([
      ['a number', 42],
      ['null', null],
      ['an empty string', ''],
      ['129 characters', 'a'.repeat(129)],
      ['a NUL character', NUL],
    ])('refuses %s as the value with 400 naming the field, changing nothing', async (_, value) => {
      const { serverId } = await discoveredServer(selfTeam);
      await expectRefusedUnchanged(selfTeam, serverId, () => publish(selfTeam, serverId, { capabilitiesFingerprint: value }), 400, 'invalid_request', [
        'capabilitiesFingerprint',
      ]);
    });
  });

  describe('publishing under approval_required, and the review (op 2)', () => {
    it('checks the value on a publication request too, though it approves nothing: stale 412, current pending', async () => {
      const { serverId, seen } = await discoveredServer(team);
      await redefineSearch(team, serverId);
      await expectRefusedUnchanged(team, serverId, () => publish(team, serverId, { capabilitiesFingerprint: seen }), 412, 'precondition_failed');

      const current = (await server(team, serverId)).capabilitiesFingerprint as string;
      const requested = await publish(team, serverId, { capabilitiesFingerprint: current });
      expect(requested.body.data).toMatchObject({ publishState: 'pending', pendingChanges: 5 });
      expect(await approvedNames(team, serverId)).toEqual([]);
      const [entry] = await auditEntries(owner.client, team, 'mcp_server.publish_request', serverId);
      expect(entry!.metadata).toMatchObject({ policy: 'approval_required', capabilitiesFingerprint: current });
    });

    it('approves with the current value: published, capabilities approved, the value audited', async () => {
      const { serverId, seen } = await discoveredServer(team);
      expect((await publish(team, serverId, {})).status).toBe(200);
      const approved = await review(serverId, { decision: 'approve', capabilitiesFingerprint: seen });
      expect(approved.status).toBe(200);
      expect(approved.body.data).toMatchObject({ publishState: 'published', pendingChanges: 0, capabilitiesFingerprint: seen });
      expect(await approvedNames(team, serverId)).toHaveLength(5);
      const [entry] = await auditEntries(owner.client, team, 'mcp_server.review', serverId);
      expect(entry!.metadata).toMatchObject({ decision: 'approve', approvedCapabilities: 5, capabilitiesFingerprint: seen });
    });

    it('refuses an approval with a value read before a refresh redefined a tool (412), changing nothing; without it approves as before', async () => {
      const { serverId, seen } = await discoveredServer(team);
      expect((await publish(team, serverId, {})).status).toBe(200);
      await redefineSearch(team, serverId);
      await expectRefusedUnchanged(team, serverId, () => review(serverId, { decision: 'approve', capabilitiesFingerprint: seen }), 412, 'precondition_failed');
      expect((await server(team, serverId)).publishState).toBe('pending');
      expect(await approvedNames(team, serverId)).toEqual([]);

      const approved = await review(serverId, { decision: 'approve', note: 'as it is' });
      expect(approved.body.data).toMatchObject({ publishState: 'published', pendingChanges: 0 });
      expect((await capabilitiesOf(owner.client, team, serverId)).get('tool:search')).toMatchObject({ description: REDEFINED_SEARCH.description, approved: true });
      const [entry] = await auditEntries(owner.client, team, 'mcp_server.review', serverId);
      expect(entry!.metadata).not.toHaveProperty('capabilitiesFingerprint');
    });

    it('refuses the field with reject (400 naming it: a rejection approves nothing), changing nothing', async () => {
      const { serverId, seen } = await discoveredServer(team);
      expect((await publish(team, serverId, {})).status).toBe(200);
      await expectRefusedUnchanged(team, serverId, () => review(serverId, { decision: 'reject', capabilitiesFingerprint: seen }), 400, 'invalid_request', [
        'capabilitiesFingerprint',
      ]);
      expect((await review(serverId, { decision: 'reject' })).body.data).toMatchObject({ publishState: 'rejected' });
    });

    it.each([
      ['a number', 42],
      ['an object', { value: 'x' }],
      ['129 characters', 'a'.repeat(129)],
      ['a NUL character', NUL],
    ])('refuses %s as the value with 400 naming the field, changing nothing', async (_, value) => {
      const { serverId } = await discoveredServer(team);
      expect((await publish(team, serverId, {})).status).toBe(200);
      await expectRefusedUnchanged(team, serverId, () => review(serverId, { decision: 'approve', capabilitiesFingerprint: value }), 400, 'invalid_request', [
        'capabilitiesFingerprint',
      ]);
    });
  });
});
