import type { Client } from 'pg';
import { describeWith, type ApiClient, type TestPerson } from '@platform/test';
import { startUpstream, type Upstream } from '../capabilities/upstream';
import { holdRows, untilWaitingBehind } from '../held-rows';
import { heldRowsPlatform } from '../held-rows-platform';
import { adminApprovalPath, capabilitiesOf, FETCH, outboxCountOf, REDEFINED_SEARCH, registerDiscoveredServer, SEARCH, serverPath } from './support';


/**
 * An approval racing a refresh that stores a new definition of the capability (docs/catalog.md, Publishing and
 * approvals). The refresh locks the server's present capabilities before it reads and stores them, and the approval
 * locks its capability before it decides, so the approval waits for the refresh and decides on what it stored:
 * with the fingerprint read before the refresh in If-Match it is 412, without it approves the definition now current.
 *
 * The overlap is made with held rows (held-rows.ts): the refresh brings back a gone capability, whose row it does not
 * lock up front, so holding that row stops the refresh inside its transaction after it has locked the present ones.
 */
describeWith('postgres', 'an approval racing a refresh that redefines the capability', () => {
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
  });
  afterAll(async () => {
    await upstream?.close();
  });

  const searchOf = async (serverId: string) => (await capabilitiesOf(owner.client, team, serverId)).get('tool:search')!;

  /**
   * A server whose `search` the approver has read (new, so changed), with `fetch` gone upstream; then, while the test
   * holds fetch's row, a refresh that finds search redefined and fetch back, stopped inside its transaction. Sends the
   * approval once the refresh waits, lets the refresh go once the approval waits behind it too, and answers both.
   */
  async function approveDuringRefresh(headersOf: (seenFingerprint: string) => Record<string, string>) {
    upstream.state.tools = [SEARCH, FETCH];
    const serverId = await registerDiscoveredServer(owner.client, team, upstream.url);
    upstream.state.tools = [SEARCH];
    expect((await owner.client.post(`${serverPath(team, serverId)}/refresh`)).status).toBe(200);
    const capabilities = await capabilitiesOf(owner.client, team, serverId);
    const seen = capabilities.get('tool:search')!;
    expect(seen).toMatchObject({ approved: false, changed: true });
    expect(capabilities.get('tool:fetch')!.goneAt).not.toBeNull();

    upstream.state.tools = [REDEFINED_SEARCH, FETCH];
    const holderPid = await holdRows(holder, 'SELECT 1 FROM catalog.capabilities WHERE id = $1 FOR UPDATE', [capabilities.get('tool:fetch')!.id]);
    const refreshing = owner.client.post(`${serverPath(team, serverId)}/refresh`);
    await untilWaitingBehind(observer, holderPid, 1, 'the refresh waiting for the held capability row');
    const approving = admin.put(adminApprovalPath(serverId, seen.id), undefined, headersOf(seen.fingerprint));
    await untilWaitingBehind(observer, holderPid, 2, 'the approval waiting behind the refresh');
    await holder.query('ROLLBACK');

    expect((await refreshing).status).toBe(200);
    return { serverId, seen, approved: await approving };
  }

  it('with the fingerprint read before the refresh in If-Match: 412, and the new definition stays unapproved', async () => {
    const { serverId, seen, approved } = await approveDuringRefresh((fingerprint) => ({ 'if-match': `"${fingerprint}"` }));
    expect([approved.status, approved.body.error?.code]).toEqual([412, 'precondition_failed']);

    const now = await searchOf(serverId);
    expect(now).toMatchObject({ description: REDEFINED_SEARCH.description, approved: false, changed: true, approvedAt: null });
    expect(now.fingerprint).not.toBe(seen.fingerprint);
    expect(await outboxCountOf(observer, 'capability.approve', seen.id)).toBe(0);
  });

  it('without If-Match: approves the definition the refresh stored, and the approved fingerprint is the current one', async () => {
    const { serverId, seen, approved } = await approveDuringRefresh(() => ({}));
    expect(approved.status).toBe(200);

    const now = await searchOf(serverId);
    expect(now.fingerprint).not.toBe(seen.fingerprint);
    expect(now).toMatchObject({ description: REDEFINED_SEARCH.description, approved: true, changed: false });
    expect(approved.body.data).toMatchObject({ fingerprint: now.fingerprint, approved: true });
    expect(approved.headers.get('etag')).toBe(`"${now.fingerprint}"`);
    expect(await outboxCountOf(observer, 'capability.approve', seen.id)).toBe(1);
  });
});
