import type { Client } from 'pg';
import { describeWith, newTeam, type ApiClient, type ApiResponse, type TestPerson } from '@platform/test';
import { startUpstream, type Upstream } from '../capabilities/upstream';
import { holdRows, untilWaitingBehind } from '../held-rows';
import { heldRowsPlatform } from '../held-rows-platform';
import { capabilitiesOf, FETCH, outboxCountOf, REDEFINED_SEARCH, registerDiscoveredServer, reviewPath, SEARCH, serverPath } from './support';


/**
 * A publication or an approving review racing a refresh that stores a changed capability set (docs/catalog.md,
 * Publishing and approvals: the capabilities precondition). The refresh stores under the server's row lock, and the
 * publication and review compare `capabilitiesFingerprint` under that lock, in a statement of their own: so they wait
 * for the refresh and decide on what it stored. With the value read before the refresh it is 412 and nothing is
 * approved; the redefined tool and the one back upstream never slip in between the check and the approval.
 *
 * The overlap is made as in approval-refresh-race.test.ts: the refresh brings back a gone capability, whose row it
 * does not lock up front, so holding that row (held-rows.ts) stops the refresh inside its transaction after it has
 * locked the server's row. Platform default `self_publish`; the review's team overrides it to `approval_required`.
 */
describeWith('postgres', 'publishing and review racing a refresh that changes the capabilities', () => {
  const race = heldRowsPlatform({ MCP_PUBLISH_POLICY: 'self_publish' });
  let upstream: Upstream;
  let admin: ApiClient;
  let owner: TestPerson;
  let team: string;
  let reviewedTeam: string;
  let holder: Client;
  let observer: Client;

  beforeAll(async () => {
    ({ admin, owner, team, holder, observer } = race());
    upstream = await startUpstream('X-Unused');
    reviewedTeam = await newTeam(admin, owner);
    const etag = (await admin.get(`/v1/admin/teams/${reviewedTeam}/publishing`)).headers.get('etag')!;
    expect((await admin.put(`/v1/admin/teams/${reviewedTeam}/publishing`, { override: 'approval_required' }, { 'if-match': etag })).status).toBe(200);
  });
  afterAll(async () => {
    await upstream?.close();
  });

  const server = async (teamRef: string, serverId: string) => (await owner.client.get(serverPath(teamRef, serverId))).body.data;

  /**
   * A server of the team offering `search` with `fetch` gone upstream, read by the approver (its capabilitiesFingerprint);
   * `prepare` then readies it (a publication request for the review). While the test holds fetch's row, a refresh
   * that finds search redefined and fetch back is stopped inside its transaction; `send` goes out with the value read
   * once the refresh waits, the refresh is let go once `send` waits behind it too, and both are answered.
   */
  async function sendDuringRefresh(teamRef: string, prepare: (serverId: string) => Promise<void>, send: (serverId: string, seen: string) => Promise<ApiResponse>) {
    upstream.state.tools = [SEARCH, FETCH];
    const serverId = await registerDiscoveredServer(owner.client, teamRef, upstream.url);
    upstream.state.tools = [SEARCH];
    expect((await owner.client.post(`${serverPath(teamRef, serverId)}/refresh`)).status).toBe(200);
    const capabilities = await capabilitiesOf(owner.client, teamRef, serverId);
    expect(capabilities.get('tool:fetch')!.goneAt).not.toBeNull();
    await prepare(serverId);
    const seen = (await server(teamRef, serverId)).capabilitiesFingerprint as string;

    upstream.state.tools = [REDEFINED_SEARCH, FETCH];
    const holderPid = await holdRows(holder, 'SELECT 1 FROM catalog.capabilities WHERE id = $1 FOR UPDATE', [capabilities.get('tool:fetch')!.id]);
    const refreshing = owner.client.post(`${serverPath(teamRef, serverId)}/refresh`);
    await untilWaitingBehind(observer, holderPid, 1, 'the refresh waiting for the held capability row');
    const sent = send(serverId, seen);
    await untilWaitingBehind(observer, holderPid, 2, 'the request waiting behind the refresh');
    await holder.query('ROLLBACK');

    expect((await refreshing).status).toBe(200);
    const now = await server(teamRef, serverId);
    expect(now.capabilitiesFingerprint).not.toBe(seen);
    return { serverId, answer: await sent };
  }

  /** Nothing of the server was approved: search (redefined by the refresh) and fetch (back) are both unapproved. */
  async function expectNothingApproved(teamRef: string, serverId: string) {
    const capabilities = await capabilitiesOf(owner.client, teamRef, serverId);
    expect(capabilities.get('tool:search')).toMatchObject({ description: REDEFINED_SEARCH.description, approved: false, changed: true });
    expect(capabilities.get('tool:fetch')).toMatchObject({ goneAt: null, approved: false, changed: true });
    expect([...capabilities.values()].filter((item) => item.approved)).toEqual([]);
  }

  it('a publication under self_publish with the value read before the refresh: 412, still a draft, nothing approved', async () => {
    const { serverId, answer } = await sendDuringRefresh(
      team,
      async () => {},
      (id, seen) => owner.client.post(`${serverPath(team, id)}/publish`, { capabilitiesFingerprint: seen }),
    );
    expect([answer.status, answer.body.error?.code]).toEqual([412, 'precondition_failed']);
    expect((await server(team, serverId)).publishState).toBe('draft');
    await expectNothingApproved(team, serverId);
    expect(await outboxCountOf(observer, 'mcp_server.publish', serverId)).toBe(0);
    expect(await outboxCountOf(observer, 'mcp_server.published', serverId)).toBe(0);
  });

  it('an approving review with the value read before the refresh: 412, still pending, nothing approved', async () => {
    const { serverId, answer } = await sendDuringRefresh(
      reviewedTeam,
      async (id) => expect((await owner.client.post(`${serverPath(reviewedTeam, id)}/publish`, {})).status).toBe(200),
      (id, seen) => admin.post(reviewPath(id), { decision: 'approve', capabilitiesFingerprint: seen }),
    );
    expect([answer.status, answer.body.error?.code]).toEqual([412, 'precondition_failed']);
    expect((await server(reviewedTeam, serverId)).publishState).toBe('pending');
    await expectNothingApproved(reviewedTeam, serverId);
    expect(await outboxCountOf(observer, 'mcp_server.review', serverId)).toBe(0);
    expect(await outboxCountOf(observer, 'mcp_server.published', serverId)).toBe(0);
  });
});
