import type { Client } from 'pg';
import { describeWith, eventually, unique, type ApiClient, type TestPerson } from '@platform/test';
import { holdRows, sessionsWaitingBehind, untilWaitingBehind } from '../held-rows';
import { heldRowsPlatform } from '../held-rows-platform';

type ApiResponse = Awaited<ReturnType<ApiClient['get']>>;

interface GatewayJson {
  id: string;
  revision: number;
  servers: { serverId: string; prefix: string }[];
}

/**
 * A gateway change naming a server while another request deletes that server (docs/catalog.md, Gateways: Which
 * servers). Whichever comes first wins, the other sees it done: a gateway never ends up naming the deleted server, and
 * the change is a clear 400 or goes through, never a 500. Each race is made with a transaction of the test holding a
 * row one request needs, so the requests overlap where they would by chance, and are let go once the database shows
 * them waiting. Background checks and discovery are off, so only these requests wait on the rows.
 */
describeWith('postgres', 'a gateway change racing the deletion of its server', () => {
  const race = heldRowsPlatform();
  let owner: TestPerson;
  let team: string;
  let holder: Client;
  let observer: Client;
  beforeAll(() => {
    ({ owner, team, holder, observer } = race());
  });

  const serverPath = (id: string) => `/v1/teams/${team}/mcp-servers/${id}`;
  const register = async (): Promise<string> => {
    // Never contacted: discovery and health checks are off, and a gateway change only reads the stored server.
    const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: 'Server', slug: unique('srv'), url: 'http://127.0.0.1:9/mcp' });
    expect(created.status).toBe(201);
    return created.body.data.id;
  };
  const createGateway = async (serverIds: string[]): Promise<GatewayJson> => {
    const created = await owner.client.post(`/v1/teams/${team}/gateways`, { slug: unique('gw'), name: 'Gateway', servers: serverIds.map((serverId) => ({ serverId })) });
    expect(created.status).toBe(201);
    return created.body.data;
  };
  const gatewayNow = async (id: string): Promise<GatewayJson> => (await owner.client.get(`/v1/teams/${team}/gateways/${id}`)).body.data;
  const patchServers = (gateway: GatewayJson, serverIds: string[]) =>
    owner.client.patch(`/v1/teams/${team}/gateways/${gateway.id}`, { servers: serverIds.map((serverId) => ({ serverId })) }, { 'if-match': `"${gateway.revision}"` });

  /** Holds a gateway's row of a server (FOR UPDATE) in a transaction of the test; answers its session's pid. */
  const holdGatewayRow = (gatewayId: string, serverId: string) =>
    holdRows(holder, 'SELECT 1 FROM catalog.gateway_servers WHERE gateway_id = $1 AND server_id = $2 FOR UPDATE', [gatewayId, serverId]);

  it('a change naming a server whose deletion is under way waits for it, then is 400 (not offered) and changes nothing', async () => {
    const kept = await register();
    const doomed = await register();
    // The deletion removes the gateways' rows of its server first: holding one of them stops it there, with the
    // server's row already locked for deletion.
    const other = await createGateway([doomed]);
    const changed = await createGateway([kept]);
    const holderPid = await holdGatewayRow(other.id, doomed);

    const deleting = owner.client.delete(serverPath(doomed));
    const [deletionPid] = await untilWaitingBehind(observer, holderPid, 1, 'the deletion waiting for the held gateway row');
    const patching = patchServers(changed, [kept, doomed]);
    await untilWaitingBehind(observer, deletionPid!, 1, 'the gateway change waiting for the deletion');
    await holder.query('ROLLBACK');

    expect((await deleting).status).toBe(204);
    const patched = await patching;
    expect(patched.status).toBe(400);
    expect(patched.body.error.fields.map((f: { field: string }) => f.field)).toEqual(['servers.1.serverId']);
    expect(await gatewayNow(changed.id)).toMatchObject({ revision: changed.revision, servers: [{ serverId: kept }] });
    expect((await gatewayNow(other.id)).servers).toEqual([]);
  });

  it('a deletion of a server that a change in progress names waits for the change, then takes the server out of the gateway', async () => {
    const kept = await register();
    const doomed = await register();
    const changed = await createGateway([kept]);
    // The change replaces the gateway's rows after checking its servers: holding its row of `kept` stops it there.
    const holderPid = await holdGatewayRow(changed.id, kept);

    const patching = patchServers(changed, [kept, doomed]);
    const [changePid] = await untilWaitingBehind(observer, holderPid, 1, 'the gateway change waiting for the held gateway row');
    let deleted: ApiResponse | undefined;
    const deleting = owner.client.delete(serverPath(doomed)).then((response) => (deleted = response));
    await eventually(
      async () => deleted !== undefined || (await sessionsWaitingBehind(observer, changePid!)).length > 0,
      'the deletion to wait for the change (or to end)',
      30_000,
    );
    // The server the change has read stays until the change is over.
    expect(deleted).toBeUndefined();
    await holder.query('ROLLBACK');

    const patched = await patching;
    expect(patched.status).toBe(200);
    expect(patched.body.data.servers.map((s: { serverId: string }) => s.serverId)).toEqual([kept, doomed]);
    expect((await deleting).status).toBe(204);
    // The deletion came second and found the new row: the gateway names only what exists.
    expect(await gatewayNow(changed.id)).toMatchObject({ revision: changed.revision + 1, servers: [{ serverId: kept }] });
    expect((await owner.client.get(serverPath(doomed))).status).toBe(404);
  });
});
