import type { Client } from 'pg';
import { createCallRecorder, type CallRecorder } from '@platform/gateway';
import { createEventBus, type EventBus } from '@platform/runtime';
import {
  adminClient,
  databaseOf,
  eventually,
  memoryLogger,
  newPerson,
  newTeam,
  startTestPlatform,
  unique,
  type ApiClient,
  type ApiResponse,
  type TestPerson,
  type TestPlatform,
} from '@platform/test';
import { callEvent } from '../calls/fixtures';
import { startUpstream, type Upstream } from '../capabilities/upstream';
import { holdRows, sessionsWaitingBehind } from '../held-rows';
import { registerServer } from '../platform-servers/support';
import { capabilitiesOf, registerDiscoveredServer } from '../publishing/support';
import { outboxMarks, writtenSince } from './written';

/**
 * Insecure direct object references on the catalog's team routes: an id of another team's object, named under a
 * team's path (or in its body, or as a list cursor), answers exactly as an id nothing has — the same status, code,
 * message and fields — and changes nothing anywhere. What the neighbouring tests already cover (a foreign server's
 * change, deletion, refresh and publication, a foreign gateway's change and deletion by id, the callers of each
 * route; bad-input-changes-nothing.test.ts, calls.test.ts) is not repeated here, except a few reads (op 6 among them)
 * those check by status alone. docs/catalog.md (Gateways, Call records) and docs/api.md (Pagination) say the rules.
 *
 * Two teams (A and B, both `self_publish`, so a missing check would approve at once) each hold discovered servers
 * with unapproved capabilities, a gateway and call records; B has a published server (in B's catalog, still not
 * A's to use); C is an archived team of A's owner.
 */

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
type Who = 'ownerA' | 'memberA' | 'admin';

interface Ref {
  id: string;
  slug: string;
}

interface World {
  teamA: string;
  teamB: string;
  teamC: string;
  serverA: Ref;
  /** A second server of A, on the same upstream: same capability names, other ids. */
  serverA2: Ref;
  serverB: Ref;
  /** B's published server: in B's catalog, never offered to A. */
  publishedB: Ref;
  serverC: Ref;
  capA: string;
  capB: string;
  capC: string;
  gatewayA: Ref;
  gatewayB: Ref;
  callsA: string[];
  callsB: string[];
}

/** One request; `unknown` is the same request naming ids nothing has. */
interface Request {
  path: string;
  body?: unknown;
}

interface ForeignCase {
  name: string;
  method: Method;
  as?: Who;
  foreign: (w: World) => Request;
  unknown: (w: World) => Request;
  /** The If-Match header: `current` reads the foreign request's own team's resource first. */
  ifMatch?: string | ((w: World) => string);
  status: number;
  code: string;
  fields?: string[];
}

const NIL_UUID = '00000000-0000-4000-8000-000000000000';
const NO_CALL = '9223372036854775807';

describe('catalog team routes: another team\'s ids answer as unknown ones and change nothing', () => {
  let platform: TestPlatform;
  let db: Client;
  let holder: Client;
  let observer: Client;
  let bus: EventBus;
  let recorder: CallRecorder;
  let admin: ApiClient;
  let ownerA: TestPerson;
  let memberA: TestPerson;
  let ownerB: TestPerson;
  let upstream: Upstream;
  const w = {} as World;
  const etags: Record<string, string> = {};

  const clientOf = (who: Who = 'ownerA') => (who === 'admin' ? admin : who === 'memberA' ? memberA.client : ownerA.client);
  const servers = (team: string) => `/v1/teams/${team}/mcp-servers`;
  const server = (team: string, id: string) => `${servers(team)}/${id}`;
  const approval = (team: string, serverId: string, capabilityId: string) => `${server(team, serverId)}/capabilities/${capabilityId}/approval`;
  const gateways = (team: string) => `/v1/teams/${team}/gateways`;
  const calls = (team: string, query = '') => `/v1/teams/${team}/calls${query}`;

  const ok = (response: ApiResponse, what: string, status = 200) => {
    if (response.status !== status) throw new Error(`${what} failed: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body.data;
  };

  /** Everything a refused request must leave as it was, read by a platform admin (who reads every team). */
  async function snapshot(): Promise<Record<string, unknown>> {
    const reads: string[] = [
      ...[w.teamA, w.teamB, w.teamC].flatMap((team) => [`${servers(team)}?limit=200`, `${gateways(team)}?limit=200`, `/v1/teams/${team}/catalog?limit=200`]),
      ...[
        [w.teamA, w.serverA],
        [w.teamA, w.serverA2],
        [w.teamB, w.serverB],
        [w.teamB, w.publishedB],
        [w.teamC, w.serverC],
      ].flatMap(([team, ref]) => [server(team as string, (ref as Ref).id), `${server(team as string, (ref as Ref).id)}/capabilities?includeGone=true`]),
      `${gateways(w.teamA)}/${w.gatewayA.id}`,
      `${gateways(w.teamB)}/${w.gatewayB.id}`,
      calls(w.teamA, '?limit=200'),
      calls(w.teamB, '?limit=200'),
    ];
    const answers = await Promise.all(reads.map((path) => admin.get(path)));
    return Object.fromEntries(reads.map((path, index) => [path, { status: answers[index]!.status, etag: answers[index]!.headers.get('etag'), body: answers[index]!.body }]));
  }

  /** The parts of an answer that must not tell a foreign id from an unknown one. */
  const answerOf = (response: ApiResponse) => ({
    status: response.status,
    code: response.body?.error?.code,
    message: response.body?.error?.message,
    fields: ((response.body?.error?.fields ?? []) as { field: string }[]).map((f) => f.field).sort(),
  });

  async function send(c: ForeignCase, request: Request): Promise<ApiResponse> {
    const headers: Record<string, string> = {};
    if (typeof c.ifMatch === 'function') headers['if-match'] = c.ifMatch(w);
    else if (c.ifMatch !== undefined) headers['if-match'] = c.ifMatch;
    return clientOf(c.as).request(c.method, request.path, request.body, headers);
  }

  /** Waits until the call is stored: its team's list shows its request id. */
  async function recordCall(team: string, teamId: string, gateway: Ref, serverRef: Ref, person: TestPerson): Promise<string> {
    const event = callEvent(teamId, {
      gateway: { ...gateway, name: 'Gateway' },
      server: { ...serverRef, name: 'Server' },
      principal: { kind: 'user', userId: person.id, displayName: 'Caller', email: person.email },
    });
    recorder.record(event);
    await recorder.flush();
    const stored = await eventually(
      async () => ((await admin.get(calls(team, '?limit=200'))).body.data as { id: number; requestId: string }[] | undefined)?.find((call) => call.requestId === event.requestId),
      `call ${event.requestId} stored`,
    );
    return String(stored.id);
  }

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' } });
    db = await databaseOf(platform, { required: true });
    holder = await databaseOf(platform, { required: true });
    observer = await databaseOf(platform, { required: true });
    bus = createEventBus(platform.platform.context.config.bus, memoryLogger('edge').logger);
    recorder = createCallRecorder({ bus, logger: memoryLogger('recorder').logger });
    upstream = await startUpstream('X-Upstream-Key');
    upstream.state.tools = [
      { name: 'search', description: 'Search the web' },
      { name: 'fetch', description: 'Fetch a page' },
    ];
    admin = await adminClient(platform);
    ownerA = await newPerson(platform, admin, 'owner-a');
    memberA = await newPerson(platform, admin, 'member-a');
    ownerB = await newPerson(platform, admin, 'owner-b');
    w.teamA = await newTeam(admin, ownerA, [[memberA, 'member']]);
    w.teamB = await newTeam(admin, ownerB);
    w.teamC = await newTeam(admin, ownerA);
    const idOf = async (team: string) => ok(await admin.get(`/v1/teams/${team}`), 'team').id as string;
    const teamIdA = await idOf(w.teamA);
    const teamIdB = await idOf(w.teamB);
    for (const team of [w.teamA, w.teamB]) {
      const path = `/v1/admin/teams/${team}/publishing`;
      const etag = (await admin.get(path)).headers.get('etag')!;
      ok(await admin.put(path, { override: 'self_publish' }, { 'if-match': etag }), 'self_publish override');
    }

    const discovered = async (client: ApiClient, team: string): Promise<Ref> => {
      const id = await registerDiscoveredServer(client, team, upstream.url);
      return { id, slug: ok(await client.get(server(team, id)), 'read server').slug };
    };
    w.serverA = await discovered(ownerA.client, w.teamA);
    w.serverA2 = await discovered(ownerA.client, w.teamA);
    w.serverB = await discovered(ownerB.client, w.teamB);
    w.serverC = await discovered(ownerA.client, w.teamC);
    w.publishedB = await registerServer(ownerB.client, w.teamB);
    // Each team's catalog holds two servers, so that its list has a second page (serverA2's capabilities are approved so).
    for (const [client, team, id] of [
      [ownerB.client, w.teamB, w.publishedB.id],
      [ownerB.client, w.teamB, (await registerServer(ownerB.client, w.teamB)).id],
      [ownerA.client, w.teamA, w.serverA2.id],
      [ownerA.client, w.teamA, (await registerServer(ownerA.client, w.teamA)).id],
    ] as const) {
      ok(await client.post(`${server(team, id)}/publish`, {}), 'publish');
    }
    w.capA = (await capabilitiesOf(ownerA.client, w.teamA, w.serverA.id)).get('tool:search')!.id;
    w.capB = (await capabilitiesOf(ownerB.client, w.teamB, w.serverB.id)).get('tool:search')!.id;
    w.capC = (await capabilitiesOf(ownerA.client, w.teamC, w.serverC.id)).get('tool:search')!.id;

    const gateway = async (client: ApiClient, team: string, serverIds: string[]): Promise<Ref> => {
      const created = ok(await client.post(gateways(team), { slug: unique('gw'), name: 'Gateway', servers: serverIds.map((serverId) => ({ serverId })) }), 'gateway', 201);
      return { id: created.id, slug: created.slug };
    };
    w.gatewayA = await gateway(ownerA.client, w.teamA, [w.serverA.id]);
    await gateway(ownerA.client, w.teamA, []);
    w.gatewayB = await gateway(ownerB.client, w.teamB, [w.serverB.id]);
    await gateway(ownerB.client, w.teamB, []);

    // Stored one at a time, alternating teams, so the ids interleave: a cursor of one team's list falls among the other's.
    w.callsA = [];
    w.callsB = [];
    for (let i = 0; i < 3; i++) {
      w.callsA.push(await recordCall(w.teamA, teamIdA, w.gatewayA, w.serverA, ownerA));
      w.callsB.push(await recordCall(w.teamB, teamIdB, w.gatewayB, w.serverB, ownerB));
    }

    etags.gatewayA = (await ownerA.client.get(`${gateways(w.teamA)}/${w.gatewayA.id}`)).headers.get('etag')!;
    const teamEtag = (await admin.get(`/v1/teams/${w.teamC}`)).headers.get('etag')!;
    ok(await admin.patch(`/v1/teams/${w.teamC}`, { archived: true }, { 'if-match': teamEtag }), 'archive');
  }, 180_000);

  afterAll(async () => {
    await holder?.query('ROLLBACK').catch(() => undefined);
    await db?.end();
    await holder?.end();
    await observer?.end();
    await bus?.close();
    await platform?.stop();
    await upstream?.close();
  });

  const table = (title: string, cases: ForeignCase[]) =>
    describe(title, () => {
      it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
        const before = await snapshot();
        const marks = await outboxMarks(db);
        const unknown = await send(c, c.unknown(w));
        const foreign = await send(c, c.foreign(w));
        expect(answerOf(foreign)).toEqual(answerOf(unknown));
        expect({ status: foreign.status, code: foreign.body?.error?.code }).toEqual({ status: c.status, code: c.code });
        if (c.fields) expect(answerOf(foreign).fields).toEqual([...c.fields].sort());
        for (const response of [unknown, foreign]) expect(await writtenSince(db, marks, response.headers.get('x-request-id') ?? '')).toEqual([]);
        expect(await snapshot()).toEqual(before);
      });
    });

  const get = (path: (w: World, id: string) => string, foreignId: (w: World) => string, unknownId = NIL_UUID) => ({
    method: 'GET' as const,
    foreign: (x: World) => ({ path: path(x, foreignId(x)) }),
    unknown: (x: World) => ({ path: path(x, unknownId) }),
  });

  table('reads under team A naming team B\'s objects (404)', [
    { name: 'B\'s server', ...get((x, id) => server(x.teamA, id), (x) => x.serverB.id), status: 404, code: 'not_found' },
    { name: 'B\'s published server', ...get((x, id) => server(x.teamA, id), (x) => x.publishedB.id), status: 404, code: 'not_found' },
    { name: 'B\'s server\'s capabilities', ...get((x, id) => `${server(x.teamA, id)}/capabilities`, (x) => x.serverB.id), status: 404, code: 'not_found' },
    { name: 'B\'s server\'s capabilities, gone ones too', ...get((x, id) => `${server(x.teamA, id)}/capabilities?includeGone=true`, (x) => x.serverB.id), status: 404, code: 'not_found' },
    { name: 'B\'s gateway by id', ...get((x, id) => `${gateways(x.teamA)}/${id}`, (x) => x.gatewayB.id), status: 404, code: 'not_found' },
    { name: 'B\'s gateway by slug', ...get((x, id) => `${gateways(x.teamA)}/${id}`, (x) => x.gatewayB.slug, 'no-such-gateway'), status: 404, code: 'not_found' },
    { name: 'B\'s call (op 6)', ...get((x, id) => calls(x.teamA, `/${id}`), (x) => x.callsB[0]!, NO_CALL), status: 404, code: 'call_not_found' },
  ]);

  table('capability approvals (op 8) naming a capability of another server (404; both teams self_publish)', [
    {
      name: 'B\'s capability under A\'s own server',
      method: 'PUT',
      foreign: (x) => ({ path: approval(x.teamA, x.serverA.id, x.capB) }),
      unknown: (x) => ({ path: approval(x.teamA, x.serverA.id, NIL_UUID) }),
      status: 404,
      code: 'not_found',
    },
    {
      name: 'B\'s capability under B\'s server, through team A',
      method: 'PUT',
      foreign: (x) => ({ path: approval(x.teamA, x.serverB.id, x.capB) }),
      unknown: (x) => ({ path: approval(x.teamA, NIL_UUID, NIL_UUID) }),
      status: 404,
      code: 'not_found',
    },
    {
      name: 'a capability of A\'s server under A\'s other server',
      method: 'PUT',
      foreign: (x) => ({ path: approval(x.teamA, x.serverA2.id, x.capA) }),
      unknown: (x) => ({ path: approval(x.teamA, x.serverA2.id, NIL_UUID) }),
      status: 404,
      code: 'not_found',
    },
    {
      name: 'the platform admins\' route: B\'s capability under A\'s server',
      as: 'admin',
      method: 'PUT',
      foreign: (x) => ({ path: `/v1/admin/mcp-servers/${x.serverA.id}/capabilities/${x.capB}/approval` }),
      unknown: (x) => ({ path: `/v1/admin/mcp-servers/${x.serverA.id}/capabilities/${NIL_UUID}/approval` }),
      status: 404,
      code: 'not_found',
    },
  ]);

  const gatewayBody = (serverIds: string[]) => ({ slug: unique('gw'), name: 'Refused', servers: serverIds.map((serverId) => ({ serverId })) });

  table('gateways of team A naming team B\'s servers or gateways', [
    {
      name: 'create with A\'s server and B\'s published server (400 naming the second)',
      method: 'POST',
      foreign: (x) => ({ path: gateways(x.teamA), body: gatewayBody([x.serverA.id, x.publishedB.id]) }),
      unknown: (x) => ({ path: gateways(x.teamA), body: gatewayBody([x.serverA.id, NIL_UUID]) }),
      status: 400,
      code: 'invalid_request',
      fields: ['servers.1.serverId'],
    },
    {
      name: 'change A\'s gateway to B\'s published server (400)',
      method: 'PATCH',
      ifMatch: () => etags.gatewayA!,
      foreign: (x) => ({ path: `${gateways(x.teamA)}/${x.gatewayA.id}`, body: { servers: [{ serverId: x.publishedB.id }] } }),
      unknown: (x) => ({ path: `${gateways(x.teamA)}/${x.gatewayA.id}`, body: { servers: [{ serverId: NIL_UUID }] } }),
      status: 400,
      code: 'invalid_request',
      fields: ['servers.0.serverId'],
    },
    {
      name: 'change B\'s gateway by slug through team A (404)',
      method: 'PATCH',
      ifMatch: '"1"',
      foreign: (x) => ({ path: `${gateways(x.teamA)}/${x.gatewayB.slug}`, body: { name: 'Taken' } }),
      unknown: (x) => ({ path: `${gateways(x.teamA)}/no-such-gateway`, body: { name: 'Taken' } }),
      status: 404,
      code: 'not_found',
    },
  ]);

  table('callers without the role: a foreign id is refused like any other, before it is looked up', [
    {
      name: 'a member of A deleting B\'s server through A (403)',
      as: 'memberA',
      method: 'DELETE',
      foreign: (x) => ({ path: server(x.teamA, x.serverB.id) }),
      unknown: (x) => ({ path: server(x.teamA, NIL_UUID) }),
      status: 403,
      code: 'forbidden',
    },
    {
      name: 'a member of A approving B\'s capability under A\'s server (403)',
      as: 'memberA',
      method: 'PUT',
      foreign: (x) => ({ path: approval(x.teamA, x.serverA.id, x.capB) }),
      unknown: (x) => ({ path: approval(x.teamA, x.serverA.id, NIL_UUID) }),
      status: 403,
      code: 'forbidden',
    },
    {
      name: 'a member of A reading B\'s call through A (403)',
      as: 'memberA',
      method: 'GET',
      foreign: (x) => ({ path: calls(x.teamA, `/${x.callsB[0]}`) }),
      unknown: (x) => ({ path: calls(x.teamA, `/${NO_CALL}`) }),
      status: 403,
      code: 'forbidden',
    },
    {
      name: 'A\'s owner reading B\'s server through the platform admins\' view (403)',
      method: 'GET',
      foreign: (x) => ({ path: `/v1/admin/mcp-servers/${x.serverB.id}` }),
      unknown: () => ({ path: `/v1/admin/mcp-servers/${NIL_UUID}` }),
      status: 403,
      code: 'forbidden',
    },
    {
      name: 'A\'s owner reading A\'s own server through the platform admins\' view (403)',
      method: 'GET',
      foreign: (x) => ({ path: `/v1/admin/mcp-servers/${x.serverA.id}` }),
      unknown: () => ({ path: `/v1/admin/mcp-servers/${NIL_UUID}` }),
      status: 403,
      code: 'forbidden',
    },
    {
      name: 'A\'s owner changing B\'s server through op 16 (403)',
      method: 'PATCH',
      ifMatch: '"1"',
      foreign: (x) => ({ path: `/v1/admin/mcp-servers/${x.serverB.id}`, body: { name: 'Mine' } }),
      unknown: () => ({ path: `/v1/admin/mcp-servers/${NIL_UUID}`, body: { name: 'Mine' } }),
      status: 403,
      code: 'forbidden',
    },
    {
      name: 'A\'s owner reviewing B\'s published server (op 2, 403)',
      method: 'POST',
      foreign: (x) => ({ path: `/v1/admin/mcp-servers/${x.publishedB.id}/review`, body: { decision: 'reject' } }),
      unknown: () => ({ path: `/v1/admin/mcp-servers/${NIL_UUID}/review`, body: { decision: 'reject' } }),
      status: 403,
      code: 'forbidden',
    },
    {
      name: 'A\'s owner setting B\'s publishing override (op 13): B is hidden like a team that does not exist (404)',
      method: 'PUT',
      ifMatch: '"1"',
      foreign: (x) => ({ path: `/v1/admin/teams/${x.teamB}/publishing`, body: { override: 'approval_required' } }),
      unknown: () => ({ path: `/v1/admin/teams/${unique('no-team')}/publishing`, body: { override: 'approval_required' } }),
      status: 404,
      code: 'not_found',
    },
  ]);

  table('an archived team C (of A\'s owner) naming team B\'s objects', [
    {
      name: 'change B\'s server through C (409 team_archived, as for an unknown one)',
      method: 'PATCH',
      ifMatch: '"1"',
      foreign: (x) => ({ path: server(x.teamC, x.serverB.id), body: { name: 'Mine' } }),
      unknown: (x) => ({ path: server(x.teamC, NIL_UUID), body: { name: 'Mine' } }),
      status: 409,
      code: 'team_archived',
    },
    {
      name: 'refresh B\'s server through C (409 team_archived; the upstream is not asked)',
      method: 'POST',
      foreign: (x) => ({ path: `${server(x.teamC, x.serverB.id)}/refresh` }),
      unknown: (x) => ({ path: `${server(x.teamC, NIL_UUID)}/refresh` }),
      status: 409,
      code: 'team_archived',
    },
    {
      name: 'approve B\'s capability under C\'s server (409 team_archived)',
      method: 'PUT',
      foreign: (x) => ({ path: approval(x.teamC, x.serverC.id, x.capB) }),
      unknown: (x) => ({ path: approval(x.teamC, x.serverC.id, NIL_UUID) }),
      status: 409,
      code: 'team_archived',
    },
    {
      name: 'approve B\'s capability under B\'s server through C (404)',
      method: 'PUT',
      foreign: (x) => ({ path: approval(x.teamC, x.serverB.id, x.capB) }),
      unknown: (x) => ({ path: approval(x.teamC, NIL_UUID, NIL_UUID) }),
      status: 404,
      code: 'not_found',
    },
    {
      name: 'a gateway in C naming B\'s published server (409 team_archived)',
      method: 'POST',
      foreign: (x) => ({ path: gateways(x.teamC), body: gatewayBody([x.publishedB.id]) }),
      unknown: (x) => ({ path: gateways(x.teamC), body: gatewayBody([NIL_UUID]) }),
      status: 409,
      code: 'team_archived',
    },
    { name: 'read B\'s server through C (404)', ...get((x, id) => server(x.teamC, id), (x) => x.serverB.id), status: 404, code: 'not_found' },
    { name: 'read B\'s gateway through C (404)', ...get((x, id) => `${gateways(x.teamC)}/${id}`, (x) => x.gatewayB.id), status: 404, code: 'not_found' },
  ]);

  // ---------------------------------------------------------------------------------------------------------
  // Cursors and list filters: a cursor is a position in a list, never a key to another team's rows
  // ---------------------------------------------------------------------------------------------------------

  /** The ids of a page of `path` read by A's owner (200 expected). */
  const idsOf = async (path: string): Promise<string[]> => (ok(await ownerA.client.get(path), path) as { id: string | number }[]).map((item) => String(item.id));
  const nextCursorOf = async (client: ApiClient, path: string): Promise<string> => {
    const cursor = (await client.get(path)).body.nextCursor as string | null;
    if (!cursor) throw new Error(`no next page: ${path}`);
    return cursor;
  };
  /** A cursor the server never made: the last characters changed. */
  const tampered = (cursor: string) => `${cursor.slice(0, -2)}${cursor.endsWith('xx') ? 'yy' : 'xx'}`;

  it.each([
    ['servers', (team: string) => servers(team)],
    ['gateways', (team: string) => gateways(team)],
    ['catalog', (team: string) => `/v1/teams/${team}/catalog`],
    ['calls', (team: string) => calls(team)],
  ] as const)("takes a cursor of B's %s list under A as a position in A's list: A's rows only; a tampered one is 400", async (_name, list) => {
    const ownIds = await idsOf(`${list(w.teamA)}?limit=200`);
    const otherIds = (ok(await admin.get(`${list(w.teamB)}?limit=200`), 'B list') as { id: string | number }[]).map((item) => String(item.id));
    const cursorB = await nextCursorOf(ownerB.client, `${list(w.teamB)}?limit=1`);
    const page = await idsOf(`${list(w.teamA)}?limit=200&cursor=${encodeURIComponent(cursorB)}`);
    expect(otherIds.length).toBeGreaterThan(1);
    expect(page.filter((id) => !ownIds.includes(id))).toEqual([]);
    const refused = await ownerA.client.get(`${list(w.teamA)}?cursor=${encodeURIComponent(tampered(cursorB))}`);
    expect(answerOf(refused)).toMatchObject({ status: 400, code: 'invalid_request', fields: ['cursor'] });
  });

  it("refuses a cursor of B's server's capabilities under A's server (400 naming cursor), as one naming no capability", async () => {
    const cursorB = await nextCursorOf(ownerB.client, `${server(w.teamB, w.serverB.id)}/capabilities?limit=1`);
    const made = Buffer.from(JSON.stringify({ id: NIL_UUID })).toString('base64url');
    const [foreign, unknown] = await Promise.all(
      [cursorB, made].map((cursor) => ownerA.client.get(`${server(w.teamA, w.serverA.id)}/capabilities?cursor=${encodeURIComponent(cursor)}`)),
    );
    expect(answerOf(foreign)).toEqual(answerOf(unknown));
    expect(answerOf(foreign)).toMatchObject({ status: 400, code: 'invalid_request', fields: ['cursor'] });
  });

  it("pages A's calls from a cursor of B's list or of another filter set without ever showing B's calls", async () => {
    // Ids alternate A, B, A, B, A, B: after B's second newest call come A's two oldest.
    const cursorB = await nextCursorOf(ownerB.client, calls(w.teamB, '?limit=2'));
    expect(await idsOf(calls(w.teamA, `?cursor=${encodeURIComponent(cursorB)}`))).toEqual(w.callsA.slice(0, 2).reverse());
    // A cursor of A's list under one filter, used with another: a position again, still A's rows only.
    const filtered = await nextCursorOf(ownerA.client, calls(w.teamA, `?gatewayId=${w.gatewayA.id}&limit=1`));
    expect(await idsOf(calls(w.teamA, `?serverId=${w.serverA.id}&cursor=${encodeURIComponent(filtered)}`))).toEqual(w.callsA.slice(0, 2).reverse());
  });

  it.each([
    ['gatewayId', (x: World) => x.gatewayB.id],
    ['serverId', (x: World) => x.serverB.id],
    ['userId', () => ownerB.id],
  ] as const)("lists no call of A's filtered by B's %s, and none of B's", async (filter, value) => {
    expect(await idsOf(calls(w.teamA, `?${filter}=${value(w)}`))).toEqual([]);
    // The same filter under B finds B's calls: the filter is not simply unknown.
    expect((ok(await ownerB.client.get(calls(w.teamB, `?${filter}=${value(w)}`)), 'B calls') as unknown[]).length).toBe(3);
  });

  // ---------------------------------------------------------------------------------------------------------
  // Timing: a foreign id is not even waited for
  // ---------------------------------------------------------------------------------------------------------

  it.each([
    ['a gateway created in A', (x: World) => ({ method: 'POST' as const, path: gateways(x.teamA), body: gatewayBody([x.serverB.id]), headers: {} })],
    [
      "A's gateway changed",
      (x: World) => ({
        method: 'PATCH' as const,
        path: `${gateways(x.teamA)}/${x.gatewayA.id}`,
        body: { servers: [{ serverId: x.serverB.id }] },
        headers: { 'if-match': etags.gatewayA! },
      }),
    ],
  ] as const)("%s naming B's server answers while B's own change holds that server, without waiting for it", async (_name, requestOf) => {
    // What B's change of its server holds (findTeamMcpServer ... FOR UPDATE), for as long as the test likes.
    const holderPid = await holdRows(holder, 'SELECT 1 FROM catalog.mcp_servers WHERE id = $1 FOR UPDATE', [w.serverB.id]);
    try {
      const request = requestOf(w);
      let answer: ApiResponse | undefined;
      const answering = ownerA.client.request(request.method, request.path, request.body, request.headers).then((response) => (answer = response));
      // Until the answer comes or the request shows waiting for the held row: a foreign id must be answered as an unknown one is, at once.
      const waiting = await eventually(
        async () => (answer ? [] : await sessionsWaitingBehind(observer, holderPid)),
        (pids) => answer !== undefined || pids.length > 0,
        60_000,
      );
      expect(waiting).toEqual([]);
      await answering;
      expect(answerOf(answer!)).toMatchObject({ status: 400, code: 'invalid_request' });
    } finally {
      await holder.query('ROLLBACK');
    }
  });
});
