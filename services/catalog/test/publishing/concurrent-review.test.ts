import type { Client } from 'pg';
import { describeWith, type ApiClient, type TestPerson } from '@platform/test';
import { startUpstream, type Upstream } from '../capabilities/upstream';
import { holdRows, untilWaitingBehind } from '../held-rows';
import { heldRowsPlatform } from '../held-rows-platform';
import { adminApprovalPath, capabilitiesOf, outboxCountOf, registerDiscoveredServer, reviewPath, serverPath } from './support';

/**
 * Two platform admins deciding at once (docs/catalog.md, Publishing and approvals): each decision locks what it changes
 * and checks the state under that lock, so exactly one applies and the other is refused as if it came second, with one
 * audit entry and one event. The overlap is made by holding the row both need in a transaction of the test (held-rows.ts).
 */
describeWith('postgres', 'concurrent publishing decisions', () => {
  const race = heldRowsPlatform();
  let upstream: Upstream;
  let admin: ApiClient;
  let owner: TestPerson;
  let team: string;
  let holder: Client;
  let observer: Client;

  beforeAll(async () => {
    ({ admin, owner, team, holder, observer } = race());
    upstream = await startUpstream('X-Unused');
    upstream.state.tools = [{ name: 'search', description: 'Search the web' }];
  });
  afterAll(async () => {
    await upstream?.close();
  });

  const outboxOf = (type: string, targetId: string) => outboxCountOf(observer, type, targetId);
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
