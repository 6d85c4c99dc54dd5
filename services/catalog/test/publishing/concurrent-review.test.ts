import type { Client } from 'pg';
import { adminClient, databaseOf, describeWith, newPerson, newTeam, startTestPlatform, type ApiClient, type TestPerson, type TestPlatform } from '@platform/test';
import { startUpstream, type Upstream } from '../capabilities/upstream';
import { holdRows, untilWaitingBehind } from '../held-rows';
import { adminApprovalPath, capabilitiesOf, registerDiscoveredServer, reviewPath, serverPath } from './support';

/**
 * Two platform admins deciding at once (docs/catalog.md, Publishing and approvals): each decision locks what it changes
 * and checks the state under that lock, so exactly one applies and the other is refused as if it came second, with one
 * audit entry and one event. The overlap is made by holding the row both need in a transaction of the test (held-rows.ts).
 */
describeWith('postgres', 'concurrent publishing decisions', () => {
  let platform: TestPlatform;
  let upstream: Upstream;
  let admin: ApiClient;
  let owner: TestPerson;
  let team: string;
  let holder: Client;
  let observer: Client;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_HEALTH_CHECK_SECONDS: '0', MCP_REFRESH_SECONDS: '0' } });
    upstream = await startUpstream('X-Unused');
    upstream.state.tools = [{ name: 'search', description: 'Search the web' }];
    admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
    holder = await databaseOf(platform, { required: true });
    observer = await databaseOf(platform, { required: true });
  }, 120_000);
  afterAll(async () => {
    await holder?.end();
    await observer?.end();
    await platform?.stop();
    await upstream?.close();
  });
  afterEach(async () => {
    await holder.query('ROLLBACK');
  });

  /** The catalog's outbox entries of `type` (an audit action or a catalog event) about `targetId`, as committed now. */
  const outboxOf = async (type: string, targetId: string) =>
    (
      await observer.query(
        `SELECT 1 FROM catalog.outbox WHERE payload->>'type' = $1 AND (key = $2 OR payload->'data'->'target'->>'id' = $2)`,
        [type, targetId],
      )
    ).rowCount;
  /** Fires both requests while the test holds what they need, lets go once both wait, and answers their outcomes sorted by status. */
  async function raced(holdSql: string, id: string, send: () => Promise<{ status: number; body: { error?: { code: string } } }>) {
    const holderPid = await holdRows(holder, holdSql, [id]);
    const answers = [send(), send()];
    await untilWaitingBehind(observer, holderPid, 2, 'both requests waiting for the held row');
    await holder.query('ROLLBACK');
    return (await Promise.all(answers)).map((answer) => [answer.status, answer.body?.error?.code ?? null]).sort();
  }

  it('two approvals of a pending server: one publishes it, the other is 409 invalid_state; one review entry and one event', async () => {
    const serverId = await registerDiscoveredServer(owner.client, team, upstream.url);
    expect((await owner.client.post(`${serverPath(team, serverId)}/publish`, {})).status).toBe(200);

    const outcomes = await raced('SELECT 1 FROM catalog.mcp_servers WHERE id = $1 FOR UPDATE', serverId, () =>
      admin.post(reviewPath(serverId), { decision: 'approve' }),
    );
    expect(outcomes).toEqual([
      [200, null],
      [409, 'invalid_state'],
    ]);
    expect((await owner.client.get(serverPath(team, serverId))).body.data.publishState).toBe('published');
    expect(await outboxOf('mcp_server.review', serverId)).toBe(1);
    expect(await outboxOf('mcp_server.published', serverId)).toBe(1);
  });

  it('two approvals of one changed capability: one approves it, the other is 409 not_changed; one audit entry', async () => {
    const serverId = await registerDiscoveredServer(owner.client, team, upstream.url);
    const capability = (await capabilitiesOf(owner.client, team, serverId)).get('tool:search')!;
    expect(capability.changed).toBe(true);

    const outcomes = await raced('SELECT 1 FROM catalog.capabilities WHERE id = $1 FOR UPDATE', capability.id, () =>
      admin.put(adminApprovalPath(serverId, capability.id)),
    );
    expect(outcomes).toEqual([
      [200, null],
      [409, 'not_changed'],
    ]);
    expect((await capabilitiesOf(owner.client, team, serverId)).get('tool:search')).toMatchObject({ approved: true, changed: false });
    expect(await outboxOf('capability.approve', capability.id)).toBe(1);
  });
});
