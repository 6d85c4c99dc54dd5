import type { Client } from 'pg';
import {
  adminClient,
  databaseOf,
  describeWith,
  newPerson,
  newTeam,
  startTestPlatform,
  type ApiClient,
  type TestPerson,
  type TestPlatform,
} from '@platform/test';
import { startUpstream, type Upstream } from '../capabilities/upstream';
import {
  adminApprovalPath,
  capabilitiesOf,
  outboxCountOf,
  outboxEntriesNaming,
  registerDiscoveredServer,
  serverPath,
  teamApprovalPath,
  type CapabilityJson,
} from './support';

type Approve = (serverId: string, capabilityId: string, headers?: Record<string, string>) => ReturnType<ApiClient['put']>;

/**
 * An approval names the definition the approver saw (docs/catalog.md, Publishing and approvals: the fingerprint
 * precondition): `If-Match: "<fingerprint>"` on op 8 and on the platform admins' route approves that definition or
 * nothing. Platform default `self_publish`, so the team route approves; background checks and discovery are off, so
 * only the tests write to the outbox about their servers.
 */
describeWith('postgres', 'approving the definition the approver saw (If-Match: fingerprint)', () => {
  let platform: TestPlatform;
  let upstream: Upstream;
  let admin: ApiClient;
  let owner: TestPerson;
  let team: string;
  let db: Client;

  beforeAll(async () => {
    platform = await startTestPlatform({
      env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish', MCP_HEALTH_CHECK_SECONDS: '0', MCP_REFRESH_SECONDS: '0' },
    });
    upstream = await startUpstream('X-Unused');
    admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
    db = await databaseOf(platform, { required: true });
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await platform?.stop();
    await upstream?.close();
  });

  const ifMatch = (value: string) => ({ 'if-match': value });
  /** A new server of the team on the upstream listing `tools`, discovered: its capabilities are new, so changed. */
  const discoveredServer = async (tools: Upstream['state']['tools']) => {
    upstream.state.tools = tools;
    return registerDiscoveredServer(owner.client, team, upstream.url);
  };
  const capability = async (serverId: string, name: string): Promise<CapabilityJson> => (await capabilitiesOf(owner.client, team, serverId)).get(`tool:${name}`)!;
  const refresh = async (serverId: string) => expect((await owner.client.post(`${serverPath(team, serverId)}/refresh`)).status).toBe(200);

  const routes: [string, () => Approve][] = [
    ['the team route (op 8)', () => (serverId, capabilityId, headers) => owner.client.put(teamApprovalPath(team, serverId, capabilityId), undefined, headers)],
    ['the platform admins\' route', () => (serverId, capabilityId, headers) => admin.put(adminApprovalPath(serverId, capabilityId), undefined, headers)],
  ];

  describe.each(routes)('on %s', (_, approver) => {
    it('approves with If-Match naming the current fingerprint, and answers that fingerprint as the ETag', async () => {
      const serverId = await discoveredServer([{ name: 'search', description: 'Search the web' }]);
      const seen = await capability(serverId, 'search');
      expect(seen).toMatchObject({ approved: false, changed: true });

      const approved = await approver()(serverId, seen.id, ifMatch(`"${seen.fingerprint}"`));
      expect(approved.status).toBe(200);
      expect(approved.body.data).toMatchObject({ id: seen.id, fingerprint: seen.fingerprint, approved: true, changed: false });
      expect(approved.headers.get('etag')).toBe(`"${seen.fingerprint}"`);
      expect(await capability(serverId, 'search')).toMatchObject({ approved: true, changed: false, fingerprint: seen.fingerprint });
    });

    it('approves the current definition with If-Match: * and without If-Match (the header is optional: never 428)', async () => {
      const serverId = await discoveredServer([
        { name: 'search', description: 'Search the web' },
        { name: 'fetch', description: 'Fetch a page' },
      ]);
      const search = await capability(serverId, 'search');
      const fetch = await capability(serverId, 'fetch');

      const any = await approver()(serverId, search.id, ifMatch('*'));
      expect([any.status, any.body.data?.approved, any.headers.get('etag')]).toEqual([200, true, `"${search.fingerprint}"`]);
      const none = await approver()(serverId, fetch.id);
      expect([none.status, none.body.data?.approved, none.headers.get('etag')]).toEqual([200, true, `"${fetch.fingerprint}"`]);
    });

    it('refuses the fingerprint read before the upstream redefined the capability (412), changing nothing; the new one can then be approved', async () => {
      const serverId = await discoveredServer([{ name: 'search', description: 'Search the web' }]);
      const seen = await capability(serverId, 'search');
      // Between the approver's read and their approval, the upstream redefines the tool and the server is refreshed.
      upstream.state.tools = [{ name: 'search', description: 'Search the web and mail the results elsewhere' }];
      await refresh(serverId);
      const redefined = await capability(serverId, 'search');
      expect(redefined.fingerprint).not.toBe(seen.fingerprint);
      const written = await outboxEntriesNaming(db, serverId);

      const stale = await approver()(serverId, seen.id, ifMatch(`"${seen.fingerprint}"`));
      expect([stale.status, stale.body.error.code]).toEqual([412, 'precondition_failed']);
      expect(stale.headers.get('etag')).toBeNull();
      // The new definition stays unapproved (hidden from gateways); no audit entry or event was written.
      expect(await capability(serverId, 'search')).toEqual(redefined);
      expect(redefined).toMatchObject({ approved: false, changed: true, approvedAt: null, description: 'Search the web and mail the results elsewhere' });
      expect(await outboxEntriesNaming(db, serverId)).toBe(written);
      expect(await outboxCountOf(db, 'capability.approve', seen.id)).toBe(0);

      // Read again, the new definition is approved knowingly.
      const approved = await approver()(serverId, seen.id, ifMatch(`"${redefined.fingerprint}"`));
      expect([approved.status, approved.headers.get('etag')]).toEqual([200, `"${redefined.fingerprint}"`]);
      expect(await outboxCountOf(db, 'capability.approve', seen.id)).toBe(1);
    });

    it('refuses a malformed If-Match (400, field If-Match), changing nothing', async () => {
      const serverId = await discoveredServer([{ name: 'search', description: 'Search the web' }]);
      const seen = await capability(serverId, 'search');
      const written = await outboxEntriesNaming(db, serverId);
      const fp = seen.fingerprint;
      // Unquoted, weak (even naming the current one), lists (with * too), unterminated, empty, a space inside.
      for (const value of [fp, `W/"${fp}"`, `"${fp}", "${fp}"`, `*, "${fp}"`, `"${fp}`, '""', '"a b"']) {
        const refused = await approver()(serverId, seen.id, ifMatch(value));
        expect([value, refused.status, refused.body.error?.code, refused.body.error?.fields]).toEqual([
          value,
          400,
          'invalid_request',
          [{ field: 'If-Match', problem: expect.any(String) }],
        ]);
      }
      expect(await capability(serverId, 'search')).toEqual(seen);
      expect(await outboxEntriesNaming(db, serverId)).toBe(written);
    });

    it('keeps 409 capability_gone before 412, and answers 412 rather than 409 not_changed for a fingerprint that is not current', async () => {
      const serverId = await discoveredServer([
        { name: 'search', description: 'Search the web' },
        { name: 'fetch', description: 'Fetch a page' },
      ]);
      const search = await capability(serverId, 'search');
      const fetch = await capability(serverId, 'fetch');
      upstream.state.tools = [{ name: 'search', description: 'Search the web' }];
      await refresh(serverId);
      const gone = await approver()(serverId, fetch.id, ifMatch('"not-its-fingerprint"'));
      expect([gone.status, gone.body.error.code]).toEqual([409, 'capability_gone']);

      expect((await approver()(serverId, search.id)).status).toBe(200);
      const notCurrent = await approver()(serverId, search.id, ifMatch('"not-its-fingerprint"'));
      expect([notCurrent.status, notCurrent.body.error.code]).toEqual([412, 'precondition_failed']);
      const current = await approver()(serverId, search.id, ifMatch(`"${search.fingerprint}"`));
      expect([current.status, current.body.error.code]).toEqual([409, 'not_changed']);
    });
  });

  it('keeps the team route 403 approval_required under approval_required, whatever If-Match names', async () => {
    const strictTeam = await newTeam(admin, owner);
    const revision = (await admin.get(`/v1/admin/teams/${strictTeam}/publishing`)).body.data.revision as number;
    const set = await admin.put(`/v1/admin/teams/${strictTeam}/publishing`, { override: 'approval_required' }, ifMatch(`"${revision}"`));
    expect(set.status).toBe(200);
    upstream.state.tools = [{ name: 'search', description: 'Search the web' }];
    const serverId = await registerDiscoveredServer(owner.client, strictTeam, upstream.url);
    const search = (await capabilitiesOf(owner.client, strictTeam, serverId)).get('tool:search')!;

    for (const value of [`"${search.fingerprint}"`, '"not-its-fingerprint"']) {
      const refused = await owner.client.put(teamApprovalPath(strictTeam, serverId, search.id), undefined, ifMatch(value));
      expect([refused.status, refused.body.error.code]).toEqual([403, 'approval_required']);
    }
    expect((await capabilitiesOf(owner.client, strictTeam, serverId)).get('tool:search')).toMatchObject({ approved: false, changed: true });
  });
});
