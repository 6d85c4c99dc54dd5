import type { Client } from 'pg';
import {
  adminClient,
  databaseOf,
  eventually,
  newPerson,
  newTeam,
  startTestPlatform,
  unique,
  type ApiClient,
  type ApiResponse,
  type TestPerson,
  type TestPlatform,
} from '@platform/test';
import { startUpstream, type Upstream } from '../capabilities/upstream';
import { PLATFORM_TEAM, PUBLIC_URL, registerServer } from '../platform-servers/support';
import { capabilitiesOf, registerDiscoveredServer } from '../publishing/support';
import { outboxMarks, writtenSince } from './written';

/**
 * The house standard on the catalog's write routes (issue 5): bad input gets a clear error with the documented
 * status and code (400 `invalid_request` naming each bad field, or the route's own code; 404, 409, 412, 428 as
 * spec §7 and docs/api.md say), and changes nothing. Every case below is one refused request, checked three ways:
 *
 * - the answer: status, `error.code` and the names in `error.fields`;
 * - the world: every resource the file set up, re-read through the API (bodies with their revision, and ETags),
 *   the lists a create would add to, and how many requests the upstreams received (a refresh that ran anyway);
 * - what was written: not one row added to `catalog.outbox` or `identity.outbox`, and no entry in identity's
 *   audit table with the request's id. The catalog writes its audit entries and domain events to its outbox in
 *   the change's own transaction, identity writes its audit entries directly, so this is the synchronous form of
 *   "no audit entry, no event". The last test also reads the audit log through the API, behind a barrier of
 *   marker changes, and looks for every refused request's id in the stored audit entries.
 *
 * One platform for the whole file; background health checks and scheduled refreshes are off so nothing but the
 * requests under test can move what is re-read.
 */

type Method = 'POST' | 'PATCH' | 'PUT' | 'DELETE';
type Who = 'owner' | 'admin';

/** What beforeAll sets up; the tables refer to it lazily, since it.each tables are built before beforeAll runs. */
interface World {
  team: string;
  teamId: string;
  otherTeam: string;
  otherTeamId: string;
  policyTeam: string;
  policyTeamId: string;
  platformTeamId: string;
  /** The team's main server: discovered (search, fetch, ...), draft, one capability approved. */
  server: { id: string; slug: string };
  /** A second server on the same upstream (same capability names), for slug and name collisions. */
  twin: { id: string; slug: string };
  /** A server whose publication is pending review. */
  pending: { id: string; slug: string };
  /** A server whose tool `drop` is gone upstream. */
  goneServer: { id: string; slug: string };
  /** Another team's server. */
  foreign: { id: string; slug: string };
  /** A platform server (owned by the platform team). */
  platformServer: { id: string; slug: string };
  /** A server of the team holding a credential stored through the team route (authValue). */
  credentialed: { id: string; slug: string };
  /** A server of the team whose headers a platform admin set (op 16), with no team credential. */
  adminHeaders: { id: string; slug: string };
  /** An archived team of the owner's (self_publish), with what it had made before: a discovered server, a gateway. */
  archivedTeam: string;
  archivedTeamId: string;
  archivedServer: { id: string; slug: string };
  archivedCap: string;
  archivedGateway: { id: string; slug: string };
  approvedCap: string;
  unapprovedCap: string;
  goneCap: string;
  gateway: { id: string; slug: string };
  otherGateway: { id: string; slug: string };
  foreignGateway: { id: string; slug: string };
}

interface BadCase {
  name: string;
  method: Method;
  path: (w: World) => string;
  body?: unknown;
  /** The body, when it names what beforeAll set up. */
  bodyOf?: (w: World) => unknown;
  /** A body sent as it is, with its content type (malformed JSON, another media type). */
  raw?: { contentType: string; text: string };
  /** The If-Match header: a fixed value, `current` (the resource's ETag, read first) or absent. */
  ifMatch?: string;
  as?: Who;
  status: number;
  code: string;
  /** The field names `error.fields` must hold, exactly (sorted); absent: not checked (no field is at fault). */
  fields?: string[];
  /** The problem `error.fields` must give each of them; absent: not checked. */
  problem?: string;
}

const NIL_UUID = '00000000-0000-4000-8000-000000000000';
const UUID_SLUG = '6f1c2a52-8d8e-4c1e-9d7a-3b2a1c0d9e8f';
const NUL = 'bad\u0000name';
// Other origins than PUBLIC_URL's (https://1.1.1.1), each passing the address guard: another host, another port.
const ANOTHER_HOST = 'https://1.0.0.1/mcp';
const ANOTHER_PORT = 'https://1.1.1.1:8443/mcp';
const long = (n: number) => 'x'.repeat(n);

describe('catalog write routes: bad input gets the documented error and changes nothing', () => {
  let platform: TestPlatform;
  let db: Client;
  let admin: ApiClient;
  let owner: TestPerson;
  let outsider: TestPerson;
  let upstream: Upstream;
  let goneUpstream: Upstream;
  const w = {} as World;
  /** Tracked targets' audit entries after setup (by target id), compared at the end. */
  let auditAfterSetup: Record<string, string[]>;
  /** The X-Request-Id of every refused request, looked for in the audit log at the end. */
  const refusedRequestIds: string[] = [];
  /** What the last case re-read after its request, if it found everything as before: the next case's starting point. */
  let unchangedSnapshot: Record<string, unknown> | undefined;

  const clientOf = (who: Who = 'owner') => (who === 'admin' ? admin : owner.client);
  const serverPath = (id: string, team = w.team) => `/v1/teams/${team}/mcp-servers/${id}`;
  const gatewayPath = (ref: string, team = w.team) => `/v1/teams/${team}/gateways/${ref}`;
  const adminServerPath = (id: string) => `/v1/admin/mcp-servers/${id}`;
  const publishingPath = (team: string) => `/v1/admin/teams/${team}/publishing`;

  const ok = (response: ApiResponse, what: string, status = 200) => {
    if (response.status !== status) throw new Error(`${what} failed: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body.data;
  };

  /** Creates a gateway in `team` (audited `gateway.create` there) and waits for its audit entry. */
  async function catalogMarker(client: ApiClient, team: string): Promise<void> {
    const created = ok(await client.post(`/v1/teams/${team}/gateways`, { slug: unique('marker'), name: 'Marker' }), 'marker gateway', 201);
    await eventually(
      async () => (await admin.get(`/v1/teams/${team}/audit?action=gateway.create&targetId=${created.id}`)).body.data ?? [],
      (entries: unknown[]) => entries.length === 1,
    );
  }

  /** Op 13 on the policy team, flipping its override (audited by identity in that team); its audit entry's id. */
  async function identityMarker(): Promise<string> {
    const current = await admin.get(publishingPath(w.policyTeam));
    const override = current.body.data.override === 'self_publish' ? 'approval_required' : 'self_publish';
    const changed = await admin.put(publishingPath(w.policyTeam), { override }, { 'if-match': current.headers.get('etag')! });
    ok(changed, 'publishing override');
    const requestId = changed.headers.get('x-request-id');
    const entries = await eventually(
      async () =>
        ((await admin.get(`/v1/teams/${w.policyTeam}/audit?action=team.publishing_override_update&targetId=${w.policyTeamId}`)).body.data ??
          []) as { id: string | number; requestId: string }[],
      (items) => items.some((entry) => entry.requestId === requestId),
    );
    return String(entries.find((entry) => entry.requestId === requestId)!.id);
  }

  /** Every tracked target's audit entry ids, per target, read from the team that owns it. */
  async function trackedAudit(): Promise<Record<string, string[]>> {
    const targets: [string, string][] = [
      [w.team, w.teamId],
      [w.team, w.server.id],
      [w.team, w.twin.id],
      [w.team, w.pending.id],
      [w.team, w.goneServer.id],
      [w.team, w.approvedCap],
      [w.team, w.unapprovedCap],
      [w.team, w.goneCap],
      [w.team, w.gateway.id],
      [w.team, w.otherGateway.id],
      [w.otherTeam, w.otherTeamId],
      [w.otherTeam, w.foreign.id],
      [w.otherTeam, w.foreignGateway.id],
      [PLATFORM_TEAM, w.platformTeamId],
      [PLATFORM_TEAM, w.platformServer.id],
      [w.policyTeam, w.policyTeamId],
      [w.team, w.credentialed.id],
      [w.team, w.adminHeaders.id],
      [w.archivedTeam, w.archivedTeamId],
      [w.archivedTeam, w.archivedServer.id],
      [w.archivedTeam, w.archivedCap],
      [w.archivedTeam, w.archivedGateway.id],
    ];
    const out: Record<string, string[]> = {};
    for (const [team, targetId] of targets) {
      const page = await admin.get(`/v1/teams/${team}/audit?targetId=${targetId}&limit=200`);
      ok(page, `audit of ${targetId}`);
      out[targetId] = (page.body.data as { id: string | number; action: string }[]).map((entry) => `${entry.id} ${entry.action}`);
    }
    return out;
  }

  /** Everything a refused request must leave as it was, read through the API. */
  async function snapshot(): Promise<Record<string, unknown>> {
    const reads: [string, ApiClient, string][] = [
      ['team servers', owner.client, `/v1/teams/${w.team}/mcp-servers?limit=200`],
      ['team gateways', owner.client, `/v1/teams/${w.team}/gateways?limit=200`],
      ['other team servers', outsider.client, `/v1/teams/${w.otherTeam}/mcp-servers?limit=200`],
      ['other team gateways', outsider.client, `/v1/teams/${w.otherTeam}/gateways?limit=200`],
      ['platform team servers', admin, `/v1/teams/${PLATFORM_TEAM}/mcp-servers?limit=200`],
      ['server', owner.client, serverPath(w.server.id)],
      ['pending server', owner.client, serverPath(w.pending.id)],
      ['server (admin view)', admin, adminServerPath(w.server.id)],
      ['platform server (admin view)', admin, adminServerPath(w.platformServer.id)],
      ['foreign server (admin view)', admin, adminServerPath(w.foreign.id)],
      ['server capabilities', owner.client, `${serverPath(w.server.id)}/capabilities?includeGone=true`],
      ['gone server capabilities', owner.client, `${serverPath(w.goneServer.id)}/capabilities?includeGone=true`],
      ['gateway', owner.client, gatewayPath(w.gateway.id)],
      ['foreign gateway', outsider.client, gatewayPath(w.foreignGateway.id, w.otherTeam)],
      ['team publishing', admin, publishingPath(w.team)],
      ['policy team publishing', admin, publishingPath(w.policyTeam)],
      ['policy team', admin, `/v1/teams/${w.policyTeam}`],
      ['platform team', admin, `/v1/teams/${PLATFORM_TEAM}`],
      ['credentialed server', owner.client, serverPath(w.credentialed.id)],
      ['credentialed server (admin view)', admin, adminServerPath(w.credentialed.id)],
      ['admin headers server', owner.client, serverPath(w.adminHeaders.id)],
      ['admin headers server (admin view)', admin, adminServerPath(w.adminHeaders.id)],
      ['archived team servers', owner.client, `/v1/teams/${w.archivedTeam}/mcp-servers?limit=200`],
      ['archived team gateways', owner.client, `/v1/teams/${w.archivedTeam}/gateways?limit=200`],
      ['archived server', owner.client, serverPath(w.archivedServer.id, w.archivedTeam)],
      ['archived server capabilities', owner.client, `${serverPath(w.archivedServer.id, w.archivedTeam)}/capabilities?includeGone=true`],
      ['archived gateway', owner.client, gatewayPath(w.archivedGateway.id, w.archivedTeam)],
      ['archived team publishing', admin, publishingPath(w.archivedTeam)],
      ['archived team', admin, `/v1/teams/${w.archivedTeam}`],
    ];
    const answers = await Promise.all(reads.map(([, client, path]) => client.get(path)));
    const out: Record<string, unknown> = {
      'upstream requests': upstream.state.seenCredentials.length,
      'gone upstream requests': goneUpstream.state.seenCredentials.length,
    };
    reads.forEach(([label], index) => {
      const answer = answers[index]!;
      out[label] = { status: answer.status, etag: answer.headers.get('etag'), body: answer.body };
    });
    return out;
  }

  /** A resource's current ETag, for the cases that send the right revision and fail on something else. */
  async function etagFor(c: BadCase): Promise<string> {
    const path = c.path(w);
    const answer = await clientOf(c.as).get(path);
    const etag = answer.headers.get('etag');
    if (!etag) throw new Error(`no ETag for ${path}: ${answer.status}`);
    return etag;
  }

  /** A write with a body ApiClient would not send (it always sends JSON), signed in as `client` is. */
  async function sendRaw(client: ApiClient, method: Method, path: string, raw: { contentType: string; text: string }, headers: Record<string, string>): Promise<ApiResponse> {
    const response = await fetch(platform.url(path), {
      method,
      headers: {
        accept: 'application/json',
        cookie: client.cookieHeader(),
        origin: platform.origin,
        'x-csrf-token': client.csrfToken ?? '',
        'content-type': raw.contentType,
        ...headers,
      },
      body: raw.text,
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON; kept as text, and the code check fails on it
    }
    return { status: response.status, headers: response.headers, body };
  }

  async function expectRefusedAndUnchanged(c: BadCase): Promise<void> {
    const headers: Record<string, string> = {};
    if (c.ifMatch === 'current') headers['if-match'] = await etagFor(c);
    else if (c.ifMatch !== undefined) headers['if-match'] = c.ifMatch;
    // The previous case's "after", when it found nothing changed: nothing but the requests under test moves what is
    // read, so that is the world now, and a change that came late shows in this case's "after" rather than going unseen.
    const before = unchangedSnapshot ?? (await snapshot());
    unchangedSnapshot = undefined;
    const marks = await outboxMarks(db);

    const response = c.raw
      ? await sendRaw(clientOf(c.as), c.method, c.path(w), c.raw, headers)
      : await clientOf(c.as).request(c.method, c.path(w), c.bodyOf ? c.bodyOf(w) : c.body, headers);

    const requestId = response.headers.get('x-request-id') ?? '';
    refusedRequestIds.push(requestId);
    const given = (response.body?.error?.fields ?? []) as { field: string; problem: string }[];
    const fields = given.map((f) => f.field).sort();
    const problems = [...new Set(given.map((f) => f.problem))];
    expect({ status: response.status, code: response.body?.error?.code, ...(c.fields ? { fields } : {}), ...(c.problem ? { problems } : {}) }).toEqual({
      status: c.status,
      code: c.code,
      ...(c.fields ? { fields: [...c.fields].sort() } : {}),
      ...(c.problem ? { problems: [c.problem] } : {}),
    });
    expect(await writtenSince(db, marks, requestId)).toEqual([]);
    const after = await snapshot();
    expect(after).toEqual(before);
    unchangedSnapshot = after;
  }

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' } });
    db = await databaseOf(platform, { required: true });
    upstream = await startUpstream('X-Upstream-Key');
    upstream.state.tools = [
      { name: 'search', description: 'Search the web' },
      { name: 'fetch', description: 'Fetch a page' },
    ];
    goneUpstream = await startUpstream('X-Upstream-Key');
    goneUpstream.state.tools = [
      { name: 'keep', description: 'Stays' },
      { name: 'drop', description: 'Goes away' },
    ];
    admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    outsider = await newPerson(platform, admin, 'outsider');
    w.team = await newTeam(admin, owner);
    w.otherTeam = await newTeam(admin, outsider);
    w.policyTeam = await newTeam(admin, owner);
    w.teamId = ok(await admin.get(`/v1/teams/${w.team}`), 'team').id;
    w.otherTeamId = ok(await admin.get(`/v1/teams/${w.otherTeam}`), 'other team').id;
    w.policyTeamId = ok(await admin.get(`/v1/teams/${w.policyTeam}`), 'policy team').id;
    w.platformTeamId = ok(await admin.get(`/v1/teams/${PLATFORM_TEAM}`), 'platform team').id;

    const slugOf = async (id: string) => ok(await owner.client.get(serverPath(id)), 'read server').slug as string;
    const serverId = await registerDiscoveredServer(owner.client, w.team, upstream.url);
    w.server = { id: serverId, slug: await slugOf(serverId) };
    const twinId = await registerDiscoveredServer(owner.client, w.team, upstream.url);
    w.twin = { id: twinId, slug: await slugOf(twinId) };
    w.pending = await registerServer(owner.client, w.team);
    ok(await owner.client.post(`${serverPath(w.pending.id)}/publish`, { note: 'please' }), 'publish request');
    const goneId = await registerDiscoveredServer(owner.client, w.team, goneUpstream.url);
    w.goneServer = { id: goneId, slug: await slugOf(goneId) };
    goneUpstream.state.tools = [{ name: 'keep', description: 'Stays' }];
    ok(await owner.client.post(`${serverPath(goneId)}/refresh`), 'refresh (drop gone)');
    w.foreign = await registerServer(outsider.client, w.otherTeam);
    w.platformServer = await registerServer(admin, PLATFORM_TEAM);

    const caps = await capabilitiesOf(owner.client, w.team, w.server.id);
    w.approvedCap = caps.get('tool:search')!.id;
    w.unapprovedCap = caps.get('tool:fetch')!.id;
    ok(await admin.put(`${adminServerPath(w.server.id)}/capabilities/${w.approvedCap}/approval`), 'approve search');
    w.goneCap = (await capabilitiesOf(owner.client, w.team, goneId)).get('tool:drop')!.id;
    expect((await capabilitiesOf(owner.client, w.team, goneId)).get('tool:drop')!.goneAt).toEqual(expect.any(String));

    const gateway = async (client: ApiClient, team: string, body: Record<string, unknown>) => {
      const created = ok(await client.post(`/v1/teams/${team}/gateways`, { slug: unique('gw'), name: 'Gateway', ...body }), 'gateway', 201);
      return { id: created.id as string, slug: created.slug as string };
    };
    w.gateway = await gateway(owner.client, w.team, { servers: [{ serverId: w.server.id }] });
    w.otherGateway = await gateway(owner.client, w.team, {});
    w.foreignGateway = await gateway(outsider.client, w.otherTeam, {});

    // Stored secrets, bound to PUBLIC_URL's origin: the team's credential on one server, a platform admin's headers on another.
    w.credentialed = await registerServer(owner.client, w.team, { authHeaderName: 'X-Upstream-Key', authValue: 'Bearer stored-team-credential' });
    w.adminHeaders = await registerServer(owner.client, w.team);
    const headersEtag = (await admin.get(adminServerPath(w.adminHeaders.id))).headers.get('etag')!;
    ok(await admin.patch(adminServerPath(w.adminHeaders.id), { headers: { 'X-Upstream-Key': 'platform-admin-header' } }, { 'if-match': headersEtag }), 'admin headers');

    // Under self_publish, so that without the archive its owner's publish and approval would go through.
    w.archivedTeam = await newTeam(admin, owner);
    w.archivedTeamId = ok(await admin.get(`/v1/teams/${w.archivedTeam}`), 'archived team').id;
    const overrideEtag = (await admin.get(publishingPath(w.archivedTeam))).headers.get('etag')!;
    ok(await admin.put(publishingPath(w.archivedTeam), { override: 'self_publish' }, { 'if-match': overrideEtag }), 'archived team override');
    const archivedServerId = await registerDiscoveredServer(owner.client, w.archivedTeam, upstream.url);
    w.archivedServer = { id: archivedServerId, slug: ok(await owner.client.get(serverPath(archivedServerId, w.archivedTeam)), 'archived server').slug };
    w.archivedCap = (await capabilitiesOf(owner.client, w.archivedTeam, archivedServerId)).get('tool:search')!.id;
    w.archivedGateway = await gateway(owner.client, w.archivedTeam, { servers: [{ serverId: archivedServerId }] });
    // Its catalog audit entries are in before it is archived: no marker can be made in it afterwards.
    await catalogMarker(owner.client, w.archivedTeam);
    const teamEtag = (await admin.get(`/v1/teams/${w.archivedTeam}`)).headers.get('etag')!;
    ok(await admin.patch(`/v1/teams/${w.archivedTeam}`, { archived: true }, { 'if-match': teamEtag }), 'archive');

    // Barriers: setup's audit entries are all in before the baseline is read.
    await identityMarker();
    await catalogMarker(owner.client, w.team);
    await catalogMarker(outsider.client, w.otherTeam);
    await catalogMarker(admin, PLATFORM_TEAM);
    auditAfterSetup = await trackedAudit();
  }, 180_000);

  afterAll(async () => {
    await db?.end();
    await platform?.stop();
    await upstream?.close();
    await goneUpstream?.close();
  });

  const table = (route: string, cases: BadCase[]) =>
    describe(route, () => {
      it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
        await expectRefusedAndUnchanged(c);
      });
    });

  // ---------------------------------------------------------------------------------------------------------
  // MCP servers: team routes
  // ---------------------------------------------------------------------------------------------------------

  const createServer = (body: unknown, status: number, code: string, fields?: string[], path?: (w: World) => string): Omit<BadCase, 'name'> => ({
    method: 'POST',
    path: path ?? ((x) => `/v1/teams/${x.team}/mcp-servers`),
    body,
    status,
    code,
    ...(fields ? { fields } : {}),
  });
  const valid = () => ({ name: 'Refused', slug: unique('refused'), url: PUBLIC_URL });
  const bad400 = (fields: string[]) => [400, 'invalid_request', fields] as const;
  // Op 16 refuses these in `headers`; as the credential's header they would go upstream too (one rule, the catalog's,
  // so a gRPC caller meets it as well: the edge checks only the name's length). Any case: header names are case-insensitive.
  const TRANSPORT_HEADERS = ['Host', 'Connection', 'transfer-encoding', 'Content-Length', 'Mcp-Session-Id', 'MCP-Protocol-Version'];
  const TRANSPORT_HEADER_PROBLEM = 'is set by the MCP transport and cannot be configured';
  const transportHeaderCase = (name: string, c: Omit<BadCase, 'name'>): BadCase => ({ name: `authHeaderName ${name}, a header the transport sets`, ...c, problem: TRANSPORT_HEADER_PROBLEM });

  table('POST /v1/teams/{team}/mcp-servers (register)', [
    { name: 'name missing', ...createServer({ slug: unique('s'), url: PUBLIC_URL }, ...bad400(['name'])) },
    { name: 'name blank after trimming', ...createServer({ ...valid(), name: '   ' }, ...bad400(['name'])) },
    { name: 'name of 101 characters', ...createServer({ ...valid(), name: long(101) }, ...bad400(['name'])) },
    { name: 'name a number', ...createServer({ ...valid(), name: 42 }, ...bad400(['name'])) },
    { name: 'name with a NUL character', ...createServer({ ...valid(), name: NUL }, ...bad400(['name'])) },
    { name: 'slug with a space and capitals', ...createServer({ ...valid(), slug: 'Bad Slug' }, ...bad400(['slug'])) },
    { name: 'slug shaped like a UUID', ...createServer({ ...valid(), slug: UUID_SLUG }, ...bad400(['slug'])) },
    { name: 'slug of 64 characters', ...createServer({ ...valid(), slug: 'a'.repeat(64) }, ...bad400(['slug'])) },
    { name: 'slug with a trailing hyphen', ...createServer({ ...valid(), slug: 'search-' }, ...bad400(['slug'])) },
    { name: 'slug already used in the team (409 conflict)', ...createServer(undefined, 409, 'conflict'), bodyOf: (x) => ({ ...valid(), slug: x.server.slug }) },
    { name: 'url missing', ...createServer({ name: 'x', slug: unique('s') }, ...bad400(['url'])) },
    { name: 'url of 2049 characters', ...createServer({ ...valid(), url: `https://1.1.1.1/${long(2033)}` }, ...bad400(['url'])) },
    { name: 'url to the metadata address (422)', ...createServer({ ...valid(), url: 'https://169.254.169.254/latest' }, 422, 'address_not_allowed') },
    { name: 'url to a private network not allowed (422)', ...createServer({ ...valid(), url: 'https://10.0.0.1/mcp' }, 422, 'address_not_allowed') },
    { name: 'url plain http to a public address (422)', ...createServer({ ...valid(), url: 'http://1.1.1.1/mcp' }, 422, 'address_not_allowed') },
    { name: 'url with an ftp scheme (422)', ...createServer({ ...valid(), url: 'ftp://1.1.1.1/' }, 422, 'address_not_allowed') },
    { name: 'url with credentials (user:password@)', ...createServer({ ...valid(), url: 'https://user:s3cret@1.1.1.1/mcp' }, ...bad400(['url'])) },
    { name: 'transport stdio', ...createServer({ ...valid(), transport: 'stdio' }, ...bad400(['transport'])) },
    { name: 'timeoutSeconds 0', ...createServer({ ...valid(), timeoutSeconds: 0 }, ...bad400(['timeoutSeconds'])) },
    { name: 'timeoutSeconds 301', ...createServer({ ...valid(), timeoutSeconds: 301 }, ...bad400(['timeoutSeconds'])) },
    { name: 'timeoutSeconds 2.5', ...createServer({ ...valid(), timeoutSeconds: 2.5 }, ...bad400(['timeoutSeconds'])) },
    { name: 'timeoutSeconds a string', ...createServer({ ...valid(), timeoutSeconds: '30' }, ...bad400(['timeoutSeconds'])) },
    { name: 'enabled a string', ...createServer({ ...valid(), enabled: 'yes' }, ...bad400(['enabled'])) },
    { name: 'sendIdentity a number', ...createServer({ ...valid(), sendIdentity: 1 }, ...bad400(['sendIdentity'])) },
    { name: 'capturePayloads null', ...createServer({ ...valid(), capturePayloads: null }, ...bad400(['capturePayloads'])) },
    { name: 'description of 2001 characters', ...createServer({ ...valid(), description: long(2001) }, ...bad400(['description'])) },
    { name: 'description with a NUL character', ...createServer({ ...valid(), description: NUL }, ...bad400(['description'])) },
    { name: 'authHeaderName without authValue', ...createServer({ ...valid(), authHeaderName: 'X-Key' }, ...bad400(['authHeaderName'])) },
    { name: 'authHeaderName not a header name', ...createServer({ ...valid(), authHeaderName: 'Bad Header', authValue: 'token-1234' }, ...bad400(['authHeaderName'])) },
    ...TRANSPORT_HEADERS.map((header) => transportHeaderCase(header, createServer({ ...valid(), authHeaderName: header, authValue: 'token-1234' }, ...bad400(['authHeaderName'])))),
    { name: 'authValue empty', ...createServer({ ...valid(), authValue: '' }, ...bad400(['authValue'])) },
    { name: 'authValue with a non-ASCII character', ...createServer({ ...valid(), authValue: 'Bearer price-\u20ac' }, ...bad400(['authValue'])) },
    { name: 'authValue with a control character', ...createServer({ ...valid(), authValue: 'Bearer a\u0007b' }, ...bad400(['authValue'])) },
    { name: 'authValue of 8193 characters', ...createServer({ ...valid(), authValue: long(8193) }, ...bad400(['authValue'])) },
    { name: 'an unknown field', ...createServer({ ...valid(), colour: 'red' }, ...bad400(['colour'])) },
    { name: 'a read-only field (publishState)', ...createServer({ ...valid(), publishState: 'published' }, ...bad400(['publishState'])) },
    { name: 'several bad fields at once, each named', ...createServer({ name: '', slug: 'X', url: PUBLIC_URL, timeoutSeconds: 0 }, ...bad400(['name', 'slug', 'timeoutSeconds'])) },
    { name: 'an array for a body', ...createServer([valid()], ...bad400(['body'])) },
    { name: 'malformed JSON', ...createServer(undefined, 400, 'invalid_request'), raw: { contentType: 'application/json', text: '{"name": "x", "slug": ' } },
    { name: 'a JSON string for a body', ...createServer(undefined, 400, 'invalid_request'), raw: { contentType: 'application/json', text: '"server"' } },
    {
      name: 'a form-encoded body (415)',
      ...createServer(undefined, 415, 'unsupported_media_type'),
      raw: { contentType: 'application/x-www-form-urlencoded', text: 'name=x&slug=form-srv&url=https%3A%2F%2F1.1.1.1%2Fmcp' },
    },
    { name: 'a team that cannot exist (404)', ...createServer(valid(), 404, 'not_found', undefined, () => '/v1/teams/Not_A_Team/mcp-servers') },
    { name: 'an unknown team (404)', ...createServer(valid(), 404, 'not_found', undefined, () => `/v1/teams/${unique('no-team')}/mcp-servers`) },
    { name: 'another team, not the caller\'s (404)', ...createServer(valid(), 404, 'not_found', undefined, (x) => `/v1/teams/${x.otherTeam}/mcp-servers`) },
  ]);

  const changeServer = (body: unknown, status: number, code: string, fields?: string[]): Omit<BadCase, 'name'> => ({
    method: 'PATCH',
    path: (x) => serverPath(x.server.id),
    body,
    ifMatch: 'current',
    status,
    code,
    ...(fields ? { fields } : {}),
  });

  table('PATCH /v1/teams/{team}/mcp-servers/{serverId} (change)', [
    { name: 'no If-Match (428)', ...changeServer({ name: 'New' }, 428, 'precondition_required'), ifMatch: undefined },
    { name: 'a stale If-Match (412)', ...changeServer({ name: 'New' }, 412, 'precondition_failed'), ifMatch: '"99"' },
    { name: 'If-Match "0" (412)', ...changeServer({ name: 'New' }, 412, 'precondition_failed'), ifMatch: '"0"' },
    { name: 'If-Match * (400)', ...changeServer({ name: 'New' }, ...bad400(['If-Match'])), ifMatch: '*' },
    { name: 'If-Match a list (400)', ...changeServer({ name: 'New' }, ...bad400(['If-Match'])), ifMatch: '"1", "2"' },
    { name: 'If-Match not a number (400)', ...changeServer({ name: 'New' }, ...bad400(['If-Match'])), ifMatch: '"abc"' },
    { name: 'name empty', ...changeServer({ name: '' }, ...bad400(['name'])) },
    { name: 'name null', ...changeServer({ name: null }, ...bad400(['name'])) },
    { name: 'name of 101 characters', ...changeServer({ name: long(101) }, ...bad400(['name'])) },
    { name: 'name with a NUL character', ...changeServer({ name: NUL }, ...bad400(['name'])) },
    { name: 'slug in capitals', ...changeServer({ slug: 'UPPER' }, ...bad400(['slug'])) },
    { name: 'slug shaped like a UUID', ...changeServer({ slug: UUID_SLUG }, ...bad400(['slug'])) },
    { name: 'slug of another server of the team (409 conflict)', ...changeServer(undefined, 409, 'conflict'), bodyOf: (x) => ({ slug: x.twin.slug }) },
    { name: 'url empty', ...changeServer({ url: '' }, ...bad400(['url'])) },
    { name: 'url with credentials (user:password@)', ...changeServer({ url: 'https://user:s3cret@1.1.1.1/mcp' }, ...bad400(['url'])) },
    { name: 'url to a private network not allowed (422)', ...changeServer({ url: 'https://10.0.0.1/mcp' }, 422, 'address_not_allowed') },
    { name: 'url to the metadata address with a valid name (422, name kept)', ...changeServer({ name: 'Renamed', url: 'https://169.254.169.254/' }, 422, 'address_not_allowed') },
    // A stored secret goes only to the origin it was given for (secret-origin.ts).
    { name: 'url to another host, a credential stored, no authValue', ...changeServer({ url: ANOTHER_HOST }, ...bad400(['authValue'])), path: (x) => serverPath(x.credentialed.id) },
    { name: 'url to another port, a credential stored, no authValue', ...changeServer({ url: ANOTHER_PORT }, ...bad400(['authValue'])), path: (x) => serverPath(x.credentialed.id) },
    {
      name: 'url to another host with a valid name and header name, a credential stored, no authValue (nothing applied)',
      ...changeServer({ name: 'Moved', url: ANOTHER_HOST, authHeaderName: 'X-Other' }, ...bad400(['authValue'])),
      path: (x) => serverPath(x.credentialed.id),
    },
    { name: "url to another host, a platform admin's headers stored (403)", ...changeServer({ url: ANOTHER_HOST }, 403, 'forbidden'), path: (x) => serverPath(x.adminHeaders.id) },
    {
      name: "url to another host with authValue, a platform admin's headers stored (403)",
      ...changeServer({ url: ANOTHER_HOST, authValue: 'Bearer re-entered' }, 403, 'forbidden'),
      path: (x) => serverPath(x.adminHeaders.id),
    },
    { name: 'transport ws', ...changeServer({ transport: 'ws' }, ...bad400(['transport'])) },
    { name: 'timeoutSeconds -1', ...changeServer({ timeoutSeconds: -1 }, ...bad400(['timeoutSeconds'])) },
    { name: 'timeoutSeconds 1e9', ...changeServer({ timeoutSeconds: 1e9 }, ...bad400(['timeoutSeconds'])) },
    { name: 'a valid name with a bad timeout (nothing applied)', ...changeServer({ name: 'Renamed', timeoutSeconds: 0 }, ...bad400(['timeoutSeconds'])) },
    { name: 'enabled a string', ...changeServer({ enabled: 'false' }, ...bad400(['enabled'])) },
    { name: 'authHeaderName without any credential', ...changeServer({ authHeaderName: 'X-Key' }, ...bad400(['authHeaderName'])) },
    // On the server holding a credential, so the name alone is at fault: the stored credential would go out under it.
    ...TRANSPORT_HEADERS.map((header) =>
      transportHeaderCase(header, { ...changeServer({ authHeaderName: header }, ...bad400(['authHeaderName'])), path: (x) => serverPath(x.credentialed.id) }),
    ),
    {
      name: 'authHeaderName Content-Length with a new authValue and a valid name (nothing applied)',
      ...changeServer({ name: 'Renamed', authHeaderName: 'Content-Length', authValue: 'Bearer re-entered' }, ...bad400(['authHeaderName'])),
      path: (x) => serverPath(x.credentialed.id),
      problem: TRANSPORT_HEADER_PROBLEM,
    },
    { name: 'authValue with a control character', ...changeServer({ authValue: 'Bearer bell\u0007' }, ...bad400(['authValue'])) },
    { name: 'authValue with a NUL character', ...changeServer({ authValue: 'Bearer a\u0000b' }, ...bad400(['authValue'])) },
    { name: 'a read-only field (revision)', ...changeServer({ revision: 7 }, ...bad400(['revision'])) },
    { name: 'a read-only field (publishState)', ...changeServer({ publishState: 'published' }, ...bad400(['publishState'])) },
    { name: 'a field of op 16 (visibility)', ...changeServer({ visibility: 'all' }, ...bad400(['visibility'])) },
    { name: 'an array for a body', ...changeServer([{ name: 'x' }], ...bad400(['body'])) },
    { name: 'malformed JSON', ...changeServer(undefined, 400, 'invalid_request'), raw: { contentType: 'application/json', text: '{"name": "New"' } },
    { name: 'a text/plain body (415)', ...changeServer(undefined, 415, 'unsupported_media_type'), raw: { contentType: 'text/plain', text: '{"name": "New"}' } },
    {
      name: 'a body over the size limit (413)',
      ...changeServer(undefined, 413, 'payload_too_large'),
      raw: { contentType: 'application/json', text: JSON.stringify({ name: 'New', description: long(1_100_000) }) },
    },
    { name: 'a malformed server id', ...changeServer({ name: 'x' }, ...bad400(['serverId'])), path: () => serverPath('not-a-uuid'), ifMatch: '"1"' },
    { name: 'an unknown server id (404)', ...changeServer({ name: 'x' }, 404, 'not_found'), path: () => serverPath(NIL_UUID), ifMatch: '"1"' },
    { name: 'another team\'s server through this team (404)', ...changeServer({ name: 'x' }, 404, 'not_found'), path: (x) => serverPath(x.foreign.id), ifMatch: '"1"' },
  ]);

  const serverAction = (method: Method, suffix: string, status: number, code: string, fields?: string[]) =>
    (path: (x: World) => string, body?: unknown): Omit<BadCase, 'name'> => ({
      method,
      path: (x) => `${path(x)}${suffix}`,
      body,
      status,
      code,
      ...(fields ? { fields } : {}),
    });

  table('DELETE /v1/teams/{team}/mcp-servers/{serverId}', [
    { name: 'a malformed server id', ...serverAction('DELETE', '', ...bad400(['serverId']))(() => serverPath('12345')) },
    { name: 'a NUL in the server id', ...serverAction('DELETE', '', ...bad400(['serverId']))(() => serverPath('%00')) },
    { name: 'an unknown server id (404)', ...serverAction('DELETE', '', 404, 'not_found')(() => serverPath(NIL_UUID)) },
    { name: 'another team\'s server through this team (404)', ...serverAction('DELETE', '', 404, 'not_found')((x) => serverPath(x.foreign.id)) },
    { name: 'another team\'s server through that team, not the caller\'s (404)', ...serverAction('DELETE', '', 404, 'not_found')((x) => serverPath(x.foreign.id, x.otherTeam)) },
    { name: 'a body (the operation takes none)', ...serverAction('DELETE', '', ...bad400(['body']))((x) => serverPath(x.server.id), { confirm: true }) },
  ]);

  table('POST /v1/teams/{team}/mcp-servers/{serverId}/refresh', [
    { name: 'a malformed server id', ...serverAction('POST', '/refresh', ...bad400(['serverId']))(() => serverPath('not-a-uuid')) },
    { name: 'an unknown server id (404)', ...serverAction('POST', '/refresh', 404, 'not_found')(() => serverPath(NIL_UUID)) },
    { name: 'another team\'s server through this team (404)', ...serverAction('POST', '/refresh', 404, 'not_found')((x) => serverPath(x.foreign.id)) },
    { name: 'a body (the operation takes none)', ...serverAction('POST', '/refresh', ...bad400(['body']))((x) => serverPath(x.server.id), { force: true }) },
  ]);

  table('POST /v1/teams/{team}/mcp-servers/{serverId}/publish', [
    { name: 'note of 2001 characters', ...serverAction('POST', '/publish', ...bad400(['note']))((x) => serverPath(x.server.id), { note: long(2001) }) },
    { name: 'note a number', ...serverAction('POST', '/publish', ...bad400(['note']))((x) => serverPath(x.server.id), { note: 42 }) },
    { name: 'note with a NUL character', ...serverAction('POST', '/publish', ...bad400(['note']))((x) => serverPath(x.server.id), { note: NUL }) },
    { name: 'an unknown field (decision)', ...serverAction('POST', '/publish', ...bad400(['decision']))((x) => serverPath(x.server.id), { decision: 'approve' }) },
    { name: 'an array for a body', ...serverAction('POST', '/publish', ...bad400(['body']))((x) => serverPath(x.server.id), []) },
    { name: 'a malformed server id', ...serverAction('POST', '/publish', ...bad400(['serverId']))(() => serverPath('not-a-uuid'), {}) },
    { name: 'an unknown server id (404)', ...serverAction('POST', '/publish', 404, 'not_found')(() => serverPath(NIL_UUID), {}) },
    { name: 'another team\'s server through this team (404)', ...serverAction('POST', '/publish', 404, 'not_found')((x) => serverPath(x.foreign.id), {}) },
    { name: 'a server already pending review (409 invalid_state)', ...serverAction('POST', '/publish', 409, 'invalid_state')((x) => serverPath(x.pending.id), { note: 'again' }) },
  ]);

  const teamApproval = (serverId: (x: World) => string, capabilityId: (x: World) => string) => (x: World) =>
    `${serverPath(serverId(x))}/capabilities/${capabilityId(x)}/approval`;
  const adminApproval = (serverId: (x: World) => string, capabilityId: (x: World) => string) => (x: World) =>
    `${adminServerPath(serverId(x))}/capabilities/${capabilityId(x)}/approval`;

  table('PUT .../capabilities/{capabilityId}/approval (op 8, and the platform admin\'s route)', [
    { name: 'team route under approval_required (403 approval_required)', method: 'PUT', path: teamApproval((x) => x.server.id, (x) => x.unapprovedCap), status: 403, code: 'approval_required' },
    { name: 'team route, a malformed capability id', method: 'PUT', path: teamApproval((x) => x.server.id, () => 'cap-1'), status: 400, code: 'invalid_request', fields: ['capabilityId'] },
    { name: 'team route, an unknown capability id (404)', method: 'PUT', path: teamApproval((x) => x.server.id, () => NIL_UUID), status: 404, code: 'not_found' },
    { name: 'team route, another server\'s capability (404)', method: 'PUT', path: teamApproval((x) => x.server.id, (x) => x.goneCap), status: 404, code: 'not_found' },
    { name: 'team route, another team\'s server (404)', method: 'PUT', path: teamApproval((x) => x.foreign.id, (x) => x.unapprovedCap), status: 404, code: 'not_found' },
    {
      name: 'team route, a body (the operation takes none)',
      method: 'PUT',
      path: teamApproval((x) => x.server.id, (x) => x.unapprovedCap),
      body: { approved: true },
      status: 400,
      code: 'invalid_request',
      fields: ['body'],
    },
    { name: 'admin route, an approved capability (409 not_changed)', as: 'admin', method: 'PUT', path: adminApproval((x) => x.server.id, (x) => x.approvedCap), status: 409, code: 'not_changed' },
    { name: 'admin route, a capability gone upstream (409 capability_gone)', as: 'admin', method: 'PUT', path: adminApproval((x) => x.goneServer.id, (x) => x.goneCap), status: 409, code: 'capability_gone' },
    { name: 'admin route, a malformed server id', as: 'admin', method: 'PUT', path: adminApproval(() => 'srv', (x) => x.unapprovedCap), status: 400, code: 'invalid_request', fields: ['serverId'] },
    { name: 'admin route, an unknown capability id (404)', as: 'admin', method: 'PUT', path: adminApproval((x) => x.server.id, () => NIL_UUID), status: 404, code: 'not_found' },
    { name: 'admin route, a capability of another server (404)', as: 'admin', method: 'PUT', path: adminApproval((x) => x.twin.id, (x) => x.unapprovedCap), status: 404, code: 'not_found' },
  ]);

  const review = (serverId: (x: World) => string, body: unknown, status: number, code: string, fields?: string[]): Omit<BadCase, 'name'> => ({
    as: 'admin',
    method: 'POST',
    path: (x) => `${adminServerPath(serverId(x))}/review`,
    body,
    status,
    code,
    ...(fields ? { fields } : {}),
  });

  table('POST /v1/admin/mcp-servers/{serverId}/review (op 2)', [
    { name: 'approve a draft server (409 invalid_state)', ...review((x) => x.server.id, { decision: 'approve' }, 409, 'invalid_state') },
    { name: 'reject a draft server (409 invalid_state)', ...review((x) => x.server.id, { decision: 'reject' }, 409, 'invalid_state') },
    { name: 'decision missing', ...review((x) => x.pending.id, {}, ...bad400(['decision'])) },
    { name: 'decision maybe', ...review((x) => x.pending.id, { decision: 'maybe' }, ...bad400(['decision'])) },
    { name: 'decision in capitals', ...review((x) => x.pending.id, { decision: 'APPROVE' }, ...bad400(['decision'])) },
    { name: 'decision a boolean', ...review((x) => x.pending.id, { decision: true }, ...bad400(['decision'])) },
    { name: 'approve with a note of 2001 characters (stays pending)', ...review((x) => x.pending.id, { decision: 'approve', note: long(2001) }, ...bad400(['note'])) },
    { name: 'approve with a NUL in the note (stays pending)', ...review((x) => x.pending.id, { decision: 'approve', note: NUL }, ...bad400(['note'])) },
    { name: 'approve with an unknown field', ...review((x) => x.pending.id, { decision: 'approve', publish: true }, ...bad400(['publish'])) },
    { name: 'a malformed server id', ...review(() => 'not-a-uuid', { decision: 'approve' }, ...bad400(['serverId'])) },
    { name: 'an unknown server id (404)', ...review(() => NIL_UUID, { decision: 'approve' }, 404, 'not_found') },
  ]);

  const op16 = (serverId: (x: World) => string, body: unknown, status: number, code: string, fields?: string[]): Omit<BadCase, 'name'> => ({
    as: 'admin',
    method: 'PATCH',
    path: (x) => adminServerPath(serverId(x)),
    body,
    ifMatch: 'current',
    status,
    code,
    ...(fields ? { fields } : {}),
  });
  const team16 = (x: World) => x.server.id;
  const plat16 = (x: World) => x.platformServer.id;
  const headers16 = (x: World) => x.adminHeaders.id;
  const credential16 = (x: World) => x.credentialed.id;
  const headers21 = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v']));

  table('PATCH /v1/admin/mcp-servers/{serverId} (op 16)', [
    { name: 'team server: visibility all (400 team_mcp_visibility)', ...op16(team16, { visibility: 'all' }, 400, 'team_mcp_visibility', ['visibility']) },
    { name: 'team server: visibility teams (400 team_mcp_visibility)', ...op16(team16, { visibility: 'teams' }, 400, 'team_mcp_visibility', ['visibility']) },
    { name: 'team server: personal true (400 team_mcp_visibility)', ...op16(team16, { personal: true }, 400, 'team_mcp_visibility', ['personal']) },
    { name: 'team server: accessMode direct (400 team_mcp_visibility)', ...op16(team16, { accessMode: 'direct' }, 400, 'team_mcp_visibility', ['accessMode']) },
    { name: 'team server: offered to another team (400 team_mcp_visibility)', ...op16(team16, undefined, 400, 'team_mcp_visibility', ['teams']), bodyOf: (x) => ({ teams: [x.otherTeam] }) },
    { name: 'team server: a valid name with visibility all (name kept)', ...op16(team16, { name: 'Renamed', visibility: 'all' }, 400, 'team_mcp_visibility', ['visibility']) },
    // A stored secret goes only to the origin it was given for (secret-origin.ts).
    { name: 'url to another host, headers stored, not given again', ...op16(headers16, { url: ANOTHER_HOST }, ...bad400(['headers'])) },
    { name: 'url to another port with a valid name, headers stored, not given again (name kept)', ...op16(headers16, { name: 'Moved', url: ANOTHER_PORT }, ...bad400(['headers'])) },
    { name: "url to another host, a team's credential stored", ...op16(credential16, { url: ANOTHER_HOST }, ...bad400(['url'])) },
    { name: "url to another port with enabled false, a team's credential stored (neither applied)", ...op16(credential16, { url: ANOTHER_PORT, enabled: false }, ...bad400(['url'])) },
    { name: 'no If-Match (428)', ...op16(plat16, { name: 'New' }, 428, 'precondition_required'), ifMatch: undefined },
    { name: 'a stale If-Match (412)', ...op16(plat16, { name: 'New' }, 412, 'precondition_failed'), ifMatch: '"42"' },
    { name: 'If-Match * (400)', ...op16(plat16, { name: 'New' }, ...bad400(['If-Match'])), ifMatch: '*' },
    { name: 'visibility public', ...op16(plat16, { visibility: 'public' }, ...bad400(['visibility'])) },
    { name: 'accessMode tunnel', ...op16(plat16, { accessMode: 'tunnel' }, ...bad400(['accessMode'])) },
    { name: 'personal a string', ...op16(plat16, { personal: 'yes' }, ...bad400(['personal'])) },
    { name: 'enabled a number', ...op16(plat16, { enabled: 0 }, ...bad400(['enabled'])) },
    { name: 'teams naming an unknown team', ...op16(plat16, { teams: [unique('no-team')] }, ...bad400(['teams'])) },
    { name: 'teams naming the platform team', ...op16(plat16, { teams: [PLATFORM_TEAM] }, ...bad400(['teams'])) },
    { name: 'teams a string, not a list', ...op16(plat16, { teams: 'all' }, ...bad400(['teams'])) },
    { name: 'teams of 101 entries', ...op16(plat16, { teams: Array.from({ length: 101 }, (_, i) => `t${i}`) }, ...bad400(['teams'])) },
    { name: 'teams with an empty entry', ...op16(plat16, { teams: [''] }, ...bad400(['teams.0'])) },
    { name: 'a valid team and an unknown one (neither applied)', ...op16(plat16, undefined, ...bad400(['teams'])), bodyOf: (x) => ({ visibility: 'teams', teams: [x.team, unique('no-team')] }) },
    { name: 'a header name with a space', ...op16(plat16, { headers: { 'Bad Header': 'v' } }, ...bad400(['headers.Bad Header'])) },
    { name: 'a header the transport sets (Content-Type)', ...op16(plat16, { headers: { 'Content-Type': 'text/plain' } }, ...bad400(['headers.Content-Type'])) },
    { name: 'a header given twice in two cases', ...op16(plat16, { headers: { 'X-Key': 'a', 'x-key': 'b' } }, ...bad400(['headers.x-key'])) },
    { name: 'a header value with a non-ASCII character', ...op16(plat16, { headers: { 'X-Key': 'caf\u00e9' } }, ...bad400(['headers.X-Key'])) },
    { name: 'a header value with a NUL character', ...op16(plat16, { headers: { 'X-Key': 'a\u0000b' } }, ...bad400(['headers.X-Key'])) },
    { name: 'a header value that is a number', ...op16(plat16, { headers: { 'X-Key': 1 } }, ...bad400(['headers.X-Key'])) },
    { name: '21 headers', ...op16(plat16, { headers: headers21 }, ...bad400(['headers'])) },
    { name: 'a valid name with a bad header (name kept)', ...op16(plat16, { name: 'Renamed', headers: { Host: 'evil.example' } }, ...bad400(['headers.Host'])) },
    { name: 'name empty', ...op16(plat16, { name: '' }, ...bad400(['name'])) },
    { name: 'name of 101 characters', ...op16(plat16, { name: long(101) }, ...bad400(['name'])) },
    { name: 'description of 2001 characters', ...op16(plat16, { description: long(2001) }, ...bad400(['description'])) },
    { name: 'url of 2049 characters', ...op16(plat16, { url: `https://1.1.1.1/${long(2033)}` }, ...bad400(['url'])) },
    { name: 'url to the metadata address (422)', ...op16(plat16, { url: 'https://169.254.169.254/' }, 422, 'address_not_allowed') },
    { name: 'url plain http to a public address (422)', ...op16(plat16, { url: 'http://1.1.1.1/mcp' }, 422, 'address_not_allowed') },
    { name: 'url with a user name (user@)', ...op16(plat16, { url: 'https://token@1.1.1.1/mcp' }, ...bad400(['url'])) },
    { name: 'a field op 16 does not take (slug)', ...op16(plat16, { slug: 'renamed' }, ...bad400(['slug'])) },
    { name: 'a malformed server id', ...op16(() => 'not-a-uuid', { name: 'x' }, ...bad400(['serverId'])), ifMatch: '"1"' },
    { name: 'an unknown server id (404)', ...op16(() => NIL_UUID, { name: 'x' }, 404, 'not_found'), ifMatch: '"1"' },
  ]);

  const op13 = (team: (x: World) => string, body: unknown, status: number, code: string, fields?: string[]): Omit<BadCase, 'name'> => ({
    as: 'admin',
    method: 'PUT',
    path: (x) => publishingPath(team(x)),
    body,
    ifMatch: 'current',
    status,
    code,
    ...(fields ? { fields } : {}),
  });
  const policyTeam = (x: World) => x.policyTeam;

  // The policy team's override is self_publish after setup: each case asks for the other value, a real change.
  table('PUT /v1/admin/teams/{team}/publishing (op 13)', [
    { name: 'no If-Match (428)', ...op13(policyTeam, { override: 'approval_required' }, 428, 'precondition_required'), ifMatch: undefined },
    { name: 'a stale If-Match (412)', ...op13(policyTeam, { override: 'approval_required' }, 412, 'precondition_failed'), ifMatch: '"999"' },
    { name: 'If-Match * (400)', ...op13(policyTeam, { override: 'approval_required' }, ...bad400(['If-Match'])), ifMatch: '*' },
    { name: 'override an unknown policy', ...op13(policyTeam, { override: 'sometimes' }, ...bad400(['override'])) },
    { name: 'override missing', ...op13(policyTeam, {}, ...bad400(['override'])) },
    { name: 'override a number', ...op13(policyTeam, { override: 1 }, ...bad400(['override'])) },
    { name: 'override with a NUL character', ...op13(policyTeam, { override: 'self_publish\u0000' }, ...bad400(['override'])) },
    { name: 'an unknown field', ...op13(policyTeam, { override: 'approval_required', reason: 'because' }, ...bad400(['reason'])) },
    { name: 'an override on the platform team', ...op13(() => PLATFORM_TEAM, { override: 'approval_required' }, ...bad400(['override'])) },
    { name: 'an unknown team (404)', ...op13(() => unique('no-team'), { override: 'self_publish' }, 404, 'not_found'), ifMatch: '"1"' },
    { name: 'a team that cannot exist (404)', ...op13(() => 'Not_A_Team', { override: 'self_publish' }, 404, 'not_found'), ifMatch: '"1"' },
  ]);

  // ---------------------------------------------------------------------------------------------------------
  // Gateways
  // ---------------------------------------------------------------------------------------------------------

  const createGateway = (body: unknown, status: number, code: string, fields?: string[]): Omit<BadCase, 'name'> => ({
    method: 'POST',
    path: (x) => `/v1/teams/${x.team}/gateways`,
    body,
    status,
    code,
    ...(fields ? { fields } : {}),
  });
  const gw = () => ({ slug: unique('gw'), name: 'Refused' });
  const withServers = (servers: (x: World) => unknown[]) => (x: World) => ({ ...gw(), servers: servers(x) });

  table('POST /v1/teams/{team}/gateways (create)', [
    { name: 'slug missing', ...createGateway({ name: 'x' }, ...bad400(['slug'])) },
    { name: 'slug empty', ...createGateway({ ...gw(), slug: '' }, ...bad400(['slug'])) },
    { name: 'slug with an underscore', ...createGateway({ ...gw(), slug: 'my_tools' }, ...bad400(['slug'])) },
    { name: 'slug shaped like a UUID', ...createGateway({ ...gw(), slug: UUID_SLUG }, ...bad400(['slug'])) },
    { name: 'slug of 64 characters', ...createGateway({ ...gw(), slug: 'a'.repeat(64) }, ...bad400(['slug'])) },
    { name: 'slug a number', ...createGateway({ ...gw(), slug: 7 }, ...bad400(['slug'])) },
    { name: 'slug taken in the team (409 conflict)', ...createGateway(undefined, 409, 'conflict'), bodyOf: (x) => ({ ...gw(), slug: x.gateway.slug }) },
    { name: 'slug taken by another team (409 conflict)', ...createGateway(undefined, 409, 'conflict'), bodyOf: (x) => ({ ...gw(), slug: x.foreignGateway.slug }) },
    { name: 'name blank', ...createGateway({ ...gw(), name: '   ' }, ...bad400(['name'])) },
    { name: 'name of 101 characters', ...createGateway({ ...gw(), name: long(101) }, ...bad400(['name'])) },
    { name: 'name with a NUL character', ...createGateway({ ...gw(), name: NUL }, ...bad400(['name'])) },
    { name: 'enabled a string', ...createGateway({ ...gw(), enabled: 'yes' }, ...bad400(['enabled'])) },
    { name: 'servers an object, not a list', ...createGateway({ ...gw(), servers: {} }, ...bad400(['servers'])) },
    { name: 'a server id that is not a UUID', ...createGateway({ ...gw(), servers: [{ serverId: 'search' }] }, ...bad400(['servers.0.serverId'])) },
    { name: 'a server without an id', ...createGateway({ ...gw(), servers: [{ prefix: 'p' }] }, ...bad400(['servers.0.serverId'])) },
    { name: 'an unknown server', ...createGateway({ ...gw(), servers: [{ serverId: NIL_UUID }] }, ...bad400(['servers.0.serverId'])) },
    { name: 'another team\'s server', ...createGateway(undefined, ...bad400(['servers.0.serverId'])), bodyOf: withServers((x) => [{ serverId: x.foreign.id }]) },
    {
      name: 'a platform server not offered to the team',
      ...createGateway(undefined, ...bad400(['servers.0.serverId'])),
      bodyOf: withServers((x) => [{ serverId: x.platformServer.id }]),
    },
    {
      name: 'the same server twice',
      ...createGateway(undefined, ...bad400(['servers.1.serverId'])),
      bodyOf: withServers((x) => [{ serverId: x.server.id }, { serverId: x.server.id, prefix: 'again' }]),
    },
    { name: 'a prefix with a double underscore', ...createGateway(undefined, ...bad400(['servers.0.prefix'])), bodyOf: withServers((x) => [{ serverId: x.server.id, prefix: 'a__b' }]) },
    { name: 'a prefix in capitals', ...createGateway(undefined, ...bad400(['servers.0.prefix'])), bodyOf: withServers((x) => [{ serverId: x.server.id, prefix: 'Search' }]) },
    { name: 'a prefix of 64 characters', ...createGateway(undefined, ...bad400(['servers.0.prefix'])), bodyOf: withServers((x) => [{ serverId: x.server.id, prefix: 'p'.repeat(64) }]) },
    { name: 'a prefix with a NUL character', ...createGateway(undefined, ...bad400(['servers.0.prefix'])), bodyOf: withServers((x) => [{ serverId: x.server.id, prefix: 'a\u0000' }]) },
    { name: 'an unknown field in a server entry', ...createGateway(undefined, ...bad400(['servers.0.alias'])), bodyOf: withServers((x) => [{ serverId: x.server.id, alias: 'a' }]) },
    { name: '51 servers', ...createGateway({ ...gw(), servers: Array.from({ length: 51 }, () => ({ serverId: NIL_UUID })) }, ...bad400(['servers'])) },
    {
      name: 'two servers sharing a prefix (409 name_collision)',
      ...createGateway(undefined, 409, 'name_collision'),
      bodyOf: withServers((x) => [{ serverId: x.server.id, prefix: 'same' }, { serverId: x.twin.id, prefix: 'same' }]),
    },
    {
      name: 'two servers exposing the same names unprefixed (409 name_collision)',
      ...createGateway(undefined, 409, 'name_collision'),
      bodyOf: withServers((x) => [{ serverId: x.server.id, prefix: '' }, { serverId: x.twin.id, prefix: '' }]),
    },
    { name: 'an unknown field', ...createGateway({ ...gw(), upstreams: [] }, ...bad400(['upstreams'])) },
    { name: 'an array for a body', ...createGateway([gw()], ...bad400(['body'])) },
    { name: 'malformed JSON', ...createGateway(undefined, 400, 'invalid_request'), raw: { contentType: 'application/json', text: "{'slug': 'single-quoted'}" } },
    { name: 'a text/plain body (415)', ...createGateway(undefined, 415, 'unsupported_media_type'), raw: { contentType: 'text/plain', text: '{"slug": "plain-gw", "name": "x"}' } },
    { name: 'another team, not the caller\'s (404)', ...createGateway(gw(), 404, 'not_found'), path: (x) => `/v1/teams/${x.otherTeam}/gateways` },
  ]);

  const changeGateway = (body: unknown, status: number, code: string, fields?: string[]): Omit<BadCase, 'name'> => ({
    method: 'PATCH',
    path: (x) => gatewayPath(x.gateway.id),
    body,
    ifMatch: 'current',
    status,
    code,
    ...(fields ? { fields } : {}),
  });

  table('PATCH /v1/teams/{team}/gateways/{gatewayId} (change)', [
    { name: 'no If-Match (428)', ...changeGateway({ name: 'New' }, 428, 'precondition_required'), ifMatch: undefined },
    { name: 'a stale If-Match (412)', ...changeGateway({ name: 'New' }, 412, 'precondition_failed'), ifMatch: '"5"' },
    { name: 'If-Match weak and stale (412)', ...changeGateway({ name: 'New' }, 412, 'precondition_failed'), ifMatch: 'W/"5"' },
    { name: 'If-Match * (400)', ...changeGateway({ name: 'New' }, ...bad400(['If-Match'])), ifMatch: '*' },
    { name: 'slug of another gateway of the team (409 conflict)', ...changeGateway(undefined, 409, 'conflict'), bodyOf: (x) => ({ slug: x.otherGateway.slug }) },
    { name: 'slug of another team\'s gateway (409 conflict)', ...changeGateway(undefined, 409, 'conflict'), bodyOf: (x) => ({ slug: x.foreignGateway.slug }) },
    { name: 'slug with a space', ...changeGateway({ slug: 'my tools' }, ...bad400(['slug'])) },
    { name: 'name empty', ...changeGateway({ name: '' }, ...bad400(['name'])) },
    { name: 'name null', ...changeGateway({ name: null }, ...bad400(['name'])) },
    { name: 'enabled null', ...changeGateway({ enabled: null }, ...bad400(['enabled'])) },
    { name: 'servers null', ...changeGateway({ servers: null }, ...bad400(['servers'])) },
    { name: 'another team\'s server', ...changeGateway(undefined, ...bad400(['servers.0.serverId'])), bodyOf: (x) => ({ servers: [{ serverId: x.foreign.id }] }) },
    {
      name: 'a valid name with colliding servers (409 name_collision, name kept)',
      ...changeGateway(undefined, 409, 'name_collision'),
      bodyOf: (x) => ({ name: 'Renamed', servers: [{ serverId: x.server.id, prefix: '' }, { serverId: x.twin.id, prefix: '' }] }),
    },
    {
      name: 'a valid name with a bad prefix (name kept)',
      ...changeGateway(undefined, ...bad400(['servers.0.prefix'])),
      bodyOf: (x) => ({ name: 'Renamed', servers: [{ serverId: x.server.id, prefix: '-p' }] }),
    },
    { name: 'malformed JSON', ...changeGateway(undefined, 400, 'invalid_request'), raw: { contentType: 'application/json', text: '{"name": "New",}' } },
    { name: 'a read-only field (url)', ...changeGateway({ url: 'https://example.com/mcp/x' }, ...bad400(['url'])) },
    { name: 'an unknown gateway slug (404)', ...changeGateway({ name: 'x' }, 404, 'not_found'), path: () => gatewayPath(unique('nope')), ifMatch: '"1"' },
    { name: 'a gateway id of 101 characters', ...changeGateway({ name: 'x' }, ...bad400(['gatewayId'])), path: () => gatewayPath(long(101)), ifMatch: '"1"' },
    { name: 'another team\'s gateway through this team (404)', ...changeGateway({ name: 'x' }, 404, 'not_found'), path: (x) => gatewayPath(x.foreignGateway.id), ifMatch: '"1"' },
  ]);

  const deleteGateway = (path: (x: World) => string, status: number, code: string, fields?: string[], body?: unknown): Omit<BadCase, 'name'> => ({
    method: 'DELETE',
    path,
    body,
    status,
    code,
    ...(fields ? { fields } : {}),
  });

  table('DELETE /v1/teams/{team}/gateways/{gatewayId}', [
    { name: 'an unknown gateway slug (404)', ...deleteGateway(() => gatewayPath(unique('nope')), 404, 'not_found') },
    { name: 'an unknown gateway id (404)', ...deleteGateway(() => gatewayPath(NIL_UUID), 404, 'not_found') },
    { name: 'another team\'s gateway by id through this team (404)', ...deleteGateway((x) => gatewayPath(x.foreignGateway.id), 404, 'not_found') },
    { name: 'another team\'s gateway by slug through this team (404)', ...deleteGateway((x) => gatewayPath(x.foreignGateway.slug), 404, 'not_found') },
    { name: 'another team\'s gateway through that team, not the caller\'s (404)', ...deleteGateway((x) => gatewayPath(x.foreignGateway.id, x.otherTeam), 404, 'not_found') },
    { name: 'a gateway id of 101 characters', ...deleteGateway(() => gatewayPath(long(101)), ...bad400(['gatewayId'])) },
    { name: 'a NUL in the gateway id', ...deleteGateway(() => gatewayPath('gw%00x'), ...bad400(['gatewayId'])) },
    { name: 'a body (the operation takes none)', ...deleteGateway((x) => gatewayPath(x.gateway.id), ...bad400(['body']), { confirm: true }) },
  ]);

  // ---------------------------------------------------------------------------------------------------------
  // An archived team: every change it asks for, and op 13 for it (docs/catalog.md, Archived teams)
  // ---------------------------------------------------------------------------------------------------------

  const archived = (method: Method, path: (x: World) => string, body?: unknown, ifMatch?: string): Omit<BadCase, 'name'> => ({
    method,
    path,
    body,
    ...(ifMatch ? { ifMatch } : {}),
    status: 409,
    code: 'team_archived',
  });
  const archivedServerPath = (x: World) => serverPath(x.archivedServer.id, x.archivedTeam);
  const archivedGatewayPath = (x: World) => gatewayPath(x.archivedGateway.id, x.archivedTeam);

  // Each is a request its team could make were it not archived (self_publish, current revisions).
  table('An archived team (409 team_archived)', [
    { name: 'register a server', ...archived('POST', (x) => `/v1/teams/${x.archivedTeam}/mcp-servers`, valid()) },
    { name: 'change a server', ...archived('PATCH', archivedServerPath, { name: 'Renamed' }, 'current') },
    { name: 'refresh a server (the upstream is not asked)', ...archived('POST', (x) => `${archivedServerPath(x)}/refresh`) },
    { name: 'publish a server', ...archived('POST', (x) => `${archivedServerPath(x)}/publish`, { note: 'please' }) },
    { name: 'approve a capability (op 8, team route)', ...archived('PUT', (x) => `${archivedServerPath(x)}/capabilities/${x.archivedCap}/approval`) },
    { name: 'delete a server', ...archived('DELETE', archivedServerPath) },
    { name: 'create a gateway', ...archived('POST', (x) => `/v1/teams/${x.archivedTeam}/gateways`, gw()) },
    { name: 'change a gateway', ...archived('PATCH', archivedGatewayPath, { name: 'Renamed' }, 'current') },
    { name: 'delete a gateway', ...archived('DELETE', archivedGatewayPath) },
    { name: 'a publishing override (op 13)', as: 'admin', ...archived('PUT', (x) => publishingPath(x.archivedTeam), { override: 'approval_required' }, 'current') },
  ]);

  // ---------------------------------------------------------------------------------------------------------
  // The audit log, read as clients read it
  // ---------------------------------------------------------------------------------------------------------

  it('left no audit entry on any resource it touched (read through the API, behind a barrier of marker changes)', async () => {
    // Each marker is audited by the same service in the same team (the audit topic's key) after every refused
    // request: once it is listed, anything those requests had written would be listed too.
    const identityMarkerId = await identityMarker();
    await catalogMarker(owner.client, w.team);
    await catalogMarker(outsider.client, w.otherTeam);
    await catalogMarker(admin, PLATFORM_TEAM);
    const now = await trackedAudit();
    now[w.policyTeamId] = now[w.policyTeamId]!.filter((entry) => !entry.startsWith(`${identityMarkerId} `));
    expect(now).toEqual(auditAfterSetup);
    // And no entry anywhere carries the request id of a refused request (the tables above ran: an empty list checks nothing).
    expect(refusedRequestIds.length).toBeGreaterThan(0);
    expect(refusedRequestIds.filter((id) => !id)).toEqual([]);
    const { rows } = await db.query('SELECT request_id, action, target_id FROM identity.audit_entries WHERE request_id = ANY($1)', [refusedRequestIds]);
    expect(rows).toEqual([]);
  });
});
