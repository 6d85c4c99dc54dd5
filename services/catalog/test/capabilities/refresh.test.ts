import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { systemRequestContext } from '@platform/runtime';
import {
  adminClient,
  eventually,
  grpcClients,
  newPerson,
  newTeam,
  startTestPlatform,
  unique,
  type ApiClient,
  type TestPerson,
  type TestPlatform,
} from '@platform/test';
import { startControllableUpstream, type ControllableUpstream } from '../health/controllable-upstream';
import { startUpstream, type Upstream } from './upstream';

const CREDENTIAL = 'upstream-secret-credential-value-1234';

interface CapabilityJson {
  id: string;
  kind: string;
  name: string;
  title: string;
  description: string;
  definition: Record<string, unknown>;
  fingerprint: string;
  approved: boolean;
  changed: boolean;
  goneAt: string | null;
  requirementOverride: { mode: string; scopes: string[] };
  requires: unknown;
}

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Discovery of an MCP server's capabilities (issue 5, spec §2.5) against a real SDK upstream on loopback. */
describe('MCP server capability discovery', () => {
  let platform: TestPlatform;
  let upstream: Upstream;
  let admin: ApiClient;
  let owner: TestPerson;
  let member: TestPerson;
  let team: string;
  let serverId: string;

  beforeAll(async () => {
    // The test counts what reaches the upstream: background health checks and scheduled refreshes stay off (the test platform's default).
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' } });
    upstream = await startUpstream('X-Upstream-Key');
    upstream.state.tools = [
      { name: 'search', description: 'Search the web' },
      { name: 'fetch', description: 'Fetch a page' },
    ];
    admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    member = await newPerson(platform, admin, 'member');
    team = await newTeam(admin, owner, [[member, 'member']]);
    const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, {
      name: 'Upstream',
      slug: unique('up'),
      url: upstream.url,
      authHeaderName: 'X-Upstream-Key',
      authValue: CREDENTIAL,
      timeoutSeconds: 5,
    });
    expect(created.status).toBe(201);
    serverId = created.body.data.id;
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
    await upstream?.close();
  });

  const refresh = (who: TestPerson = owner) => who.client.post(`/v1/teams/${team}/mcp-servers/${serverId}/refresh`);
  const list = (query = '') => member.client.get(`/v1/teams/${team}/mcp-servers/${serverId}/capabilities${query}`);
  const byKey = (items: CapabilityJson[]) => new Map(items.map((item) => [`${item.kind}:${item.name}`, item]));

  it('lists tools, resources, templates and prompts with fingerprints, unapproved, sending the credential upstream', async () => {
    upstream.state.seenCredentials = [];
    const refreshed = await refresh();
    expect(refreshed.status).toBe(200);
    const items = refreshed.body.data as CapabilityJson[];
    expect(items.map((item) => `${item.kind}:${item.name}`)).toEqual([
      'tool:fetch',
      'tool:search',
      'resource:file:///readme.md',
      'resource_template:issues://{id}',
      'prompt:summarise',
    ]);
    for (const item of items) {
      expect(item.fingerprint).toMatch(/^[0-9a-f]{64}$/);
      // New: unapproved, and so an unapproved change (§2.5 changed) that op 8 may approve.
      expect([item.approved, item.changed, item.goneAt]).toEqual([false, true, null]);
      // §2.5's auth-provider fields: nothing sets a requirement yet, so each inherits its server's, which has none.
      expect([item.requirementOverride, item.requires]).toEqual([{ mode: 'inherit', scopes: [] }, null]);
    }
    const search = byKey(items).get('tool:search')!;
    expect(search).toMatchObject({ title: 'search title', description: 'Search the web' });
    expect(search.definition).toMatchObject({ name: 'search', inputSchema: { type: 'object', properties: { query: { type: 'string' } } } });
    expect(byKey(items).get('prompt:summarise')!.definition.arguments).toEqual([{ name: 'text', required: true }]);

    expect(upstream.state.seenCredentials.length).toBeGreaterThan(0);
    expect(upstream.state.seenCredentials.every((value) => value === CREDENTIAL)).toBe(true);
    expect(JSON.stringify(refreshed.body)).not.toContain(CREDENTIAL);
    expect(JSON.stringify((await list()).body)).not.toContain(CREDENTIAL);
  });

  it('keeps ids and fingerprints when the upstream is unchanged, and members can read the list', async () => {
    const first = byKey((await list()).body.data);
    const second = await refresh();
    expect(second.status).toBe(200);
    const again = byKey(second.body.data);
    expect([...again.keys()]).toEqual([...first.keys()]);
    for (const [key, item] of again) expect([item.id, item.fingerprint]).toEqual([first.get(key)!.id, first.get(key)!.fingerprint]);
  });

  it('stores capabilities whose text PostgreSQL cannot hold as it is (NUL, a lone surrogate), made storable', async () => {
    const odd = await startUpstream('X-Upstream-Key');
    try {
      odd.state.tools = [
        { name: 'nul', description: 'before\u0000after' },
        { name: 'lone', description: 'half \ud800 pair' },
      ];
      // A team of its own: the other tests read this team's latest refresh entries.
      const oddTeam = await newTeam(admin, owner);
      const created = await owner.client.post(`/v1/teams/${oddTeam}/mcp-servers`, { name: 'Odd', slug: unique('odd'), url: odd.url, timeoutSeconds: 5 });
      expect(created.status).toBe(201);
      const path = `/v1/teams/${oddTeam}/mcp-servers/${created.body.data.id}`;
      const refreshed = await owner.client.post(`${path}/refresh`);
      expect(refreshed.status).toBe(200);
      const tools = byKey(refreshed.body.data);
      expect(tools.get('tool:nul')).toMatchObject({ description: 'beforeafter', definition: expect.objectContaining({ description: 'beforeafter' }) });
      expect(tools.get('tool:lone')).toMatchObject({ description: 'half \ufffd pair', definition: expect.objectContaining({ description: 'half \ufffd pair' }) });
      // The fingerprint is of the stored definition: the same upstream refreshed again changes nothing.
      const again = byKey((await owner.client.post(`${path}/refresh`)).body.data);
      expect(again.get('tool:nul')!.fingerprint).toBe(tools.get('tool:nul')!.fingerprint);
      expect(again.get('tool:lone')!.fingerprint).toBe(tools.get('tool:lone')!.fingerprint);
    } finally {
      await odd.close();
    }
  });

  it('changes the fingerprint of a tool whose description changed, and only that one', async () => {
    const before = byKey((await list()).body.data);
    upstream.state.tools = [
      { name: 'search', description: 'Search the whole web' },
      { name: 'fetch', description: 'Fetch a page' },
    ];
    const after = byKey((await refresh()).body.data);
    expect(after.get('tool:search')!.fingerprint).not.toBe(before.get('tool:search')!.fingerprint);
    expect(after.get('tool:search')!.id).toBe(before.get('tool:search')!.id);
    expect(after.get('tool:search')!.description).toBe('Search the whole web');
    expect(after.get('tool:fetch')!.fingerprint).toBe(before.get('tool:fetch')!.fingerprint);
  });

  it('marks a removed tool gone, shows it only with includeGone, and clears goneAt when it reappears', async () => {
    upstream.state.tools = [{ name: 'search', description: 'Search the whole web' }];
    const refreshed = await refresh();
    expect(refreshed.status).toBe(200);
    expect(byKey(refreshed.body.data).has('tool:fetch')).toBe(false);
    const withGone = byKey((await list('?includeGone=true')).body.data);
    expect(withGone.get('tool:fetch')!.goneAt).toEqual(expect.any(String));
    // Gone: nothing to approve, so no unapproved change (§2.5 changed).
    expect(withGone.get('tool:fetch')!.changed).toBe(false);

    upstream.state.tools = [
      { name: 'search', description: 'Search the whole web' },
      { name: 'fetch', description: 'Fetch a page' },
    ];
    const back = byKey((await refresh()).body.data);
    expect(back.get('tool:fetch')).toMatchObject({ id: withGone.get('tool:fetch')!.id, goneAt: null });
    // Coming back is a change (edges must look again), counted apart from new and redefined capabilities.
    const entry = await eventually(
      async () => ((await owner.client.get(`/v1/teams/${team}/audit?action=mcp_server.refresh`)).body.data ?? []) as { targetId: string; metadata: object }[],
      (items) => items.length >= 5,
    );
    expect(entry[0]!.metadata).toMatchObject({ outcome: 'succeeded', tools: 2, added: 0, returned: 1, redefined: 0, gone: 0 });
  });

  it('audits refreshes with counts', async () => {
    // Five successful refreshes so far; audit entries arrive asynchronously, newest first.
    const entries = await eventually(
      async () => ((await owner.client.get(`/v1/teams/${team}/audit?action=mcp_server.refresh`)).body.data ?? []) as { targetId: string; metadata: object }[],
      (items) => items.length >= 5,
    );
    const entry = entries[0]!;
    expect(entry.targetId).toBe(serverId);
    expect(entry.metadata).toMatchObject({ outcome: 'succeeded', tools: 2, resources: 1, resourceTemplates: 1, prompts: 1 });
    expect(JSON.stringify(entry)).not.toContain(CREDENTIAL);
  });

  it('keeps the revision when a refresh changes the view, and answers a revalidation naming it with the new view, never 304', async () => {
    const path = `/v1/teams/${team}/mcp-servers/${serverId}`;
    const before = await member.client.get(path);
    const etag = before.headers.get('etag')!;
    upstream.state.tools = [{ name: 'only', description: 'The only tool' }];
    expect((await refresh()).status).toBe(200);

    // As a browser revalidates what it cached (fetch alone would add Cache-Control: no-cache).
    const after = await member.client.get(path, { 'if-none-match': etag, 'cache-control': 'max-age=0' });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).toBe(etag);
    expect(after.body.data.counts.tools).toBe(1);
    expect(after.body.data.refreshedAt).not.toBe(before.body.data.refreshedAt);
    // The refresh is the platform's observation, not a client's write: a change made with the revision read before it applies.
    expect((await owner.client.patch(path, { name: 'Upstream' }, { 'if-match': etag })).status).toBe(200);

    upstream.state.tools = [
      { name: 'search', description: 'Search the whole web' },
      { name: 'fetch', description: 'Fetch a page' },
    ];
    expect((await refresh()).status).toBe(200);
  });

  it('refuses members (403) and unknown servers (404)', async () => {
    expect((await refresh(member)).status).toBe(403);
    const unknown = await owner.client.post(`/v1/teams/${team}/mcp-servers/00000000-0000-4000-8000-000000000000/refresh`);
    expect(unknown.status).toBe(404);
  });

  it('answers 503 for an unreachable server and records the error', async () => {
    const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, {
      name: 'Down',
      slug: unique('down'),
      url: `http://127.0.0.1:${await closedPort()}/mcp`,
      timeoutSeconds: 3,
    });
    expect(created.status).toBe(201);
    const downId = created.body.data.id as string;
    const refused = await owner.client.post(`/v1/teams/${team}/mcp-servers/${downId}/refresh`);
    expect([refused.status, refused.body.error?.code]).toEqual([503, 'unavailable']);
    expect(refused.body.error.message).toBe('The MCP server could not be reached: connection_refused');

    const entry = await eventually(
      async () =>
        ((await owner.client.get(`/v1/teams/${team}/audit?action=mcp_server.refresh`)).body.data ?? []).find(
          (item: { targetId: string }) => item.targetId === downId,
        ),
      'a failed mcp_server.refresh audit entry',
    );
    expect(entry.metadata).toEqual({ outcome: 'failed', errorClass: 'connection_refused' });

    // The error is kept on the server (and nothing was ever discovered), as its record says on any database.
    const stored = (await owner.client.get(`/v1/teams/${team}/mcp-servers/${downId}`)).body.data;
    expect(stored).toMatchObject({ lastRefreshError: 'The MCP server could not be reached: connection_refused', refreshedAt: null });
    expect((await owner.client.get(`/v1/teams/${team}/mcp-servers/${downId}/capabilities`)).body.data).toEqual([]);
  });

  it('answers 503 for a malformed upstream answer', async () => {
    const garbage = createHttpServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{not json'));
    await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = garbage.address() as AddressInfo;
      const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: 'Bad', slug: unique('bad'), url: `http://127.0.0.1:${port}/mcp` });
      const refused = await owner.client.post(`/v1/teams/${team}/mcp-servers/${created.body.data.id}/refresh`);
      expect([refused.status, refused.body.error?.message]).toEqual([503, 'The MCP server could not be reached: protocol_error']);
    } finally {
      await new Promise((resolve) => garbage.close(resolve));
    }
  });

  it('refuses a team\'s refresh while the team is archived (409 team_archived); the platform\'s own refresh goes on', async () => {
    const archivable = await newTeam(admin, owner);
    const teamId = (await owner.client.get(`/v1/teams/${archivable}`)).body.data.id as string;
    const created = await owner.client.post(`/v1/teams/${archivable}/mcp-servers`, { name: 'Archived', slug: unique('arch'), url: upstream.url, timeoutSeconds: 5 });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    const revision = (await owner.client.get(`/v1/teams/${archivable}`)).body.data.revision;
    expect((await owner.client.patch(`/v1/teams/${archivable}`, { archived: true }, { 'if-match': `"${revision}"` })).status).toBe(200);

    const refused = await owner.client.post(`/v1/teams/${archivable}/mcp-servers/${id}/refresh`);
    expect([refused.status, refused.body.error?.code]).toEqual([409, 'team_archived']);
    expect((await owner.client.get(`/v1/teams/${archivable}/mcp-servers/${id}`)).body.data).toMatchObject({ refreshedAt: null, counts: { tools: 0 } });

    // The scheduler (and the data plane after an upstream's list_changed) refresh as the system: not refused.
    const clients = grpcClients(platform);
    try {
      const answer = await clients.catalog.refreshMcpServer({ context: systemRequestContext('system', 'scheduled-refresh'), teamId, serverId: id });
      expect(answer.capabilities.map((item) => item.name)).toEqual(expect.arrayContaining(['summarise', 'search']));
    } finally {
      await clients.close();
    }
  });

  describe('a server moved to another address while it was discovered', () => {
    const started: ControllableUpstream[] = [];
    afterAll(async () => {
      for (const item of started) await item.close();
    });

    /** A server at an upstream whose `tools/list` waits, with a second upstream to move it to. */
    async function movingServer(): Promise<{ path: string; old: ControllableUpstream; moved: ControllableUpstream }> {
      const old = await startControllableUpstream(['old_tool']);
      const moved = await startControllableUpstream(['new_tool']);
      started.push(old, moved);
      const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: 'Moving', slug: unique('mv'), url: old.url, timeoutSeconds: 30 });
      expect(created.status).toBe(201);
      old.holdToolsList = true;
      return { path: `/v1/teams/${team}/mcp-servers/${created.body.data.id}`, old, moved };
    }

    /**
     * Starts a refresh and, once its discovery waits at the old upstream, moves the server to the new one. The
     * refresh's answer is still to come (wrapped, so awaiting this does not await it).
     */
    async function refreshWhileMoving({ path, old, moved }: { path: string; old: ControllableUpstream; moved: ControllableUpstream }) {
      const answer = owner.client.post(`${path}/refresh`);
      await eventually(() => old.pendingToolsList, (pending) => pending === 1);
      const changed = await owner.client.patch(path, { url: moved.url }, { 'if-match': '"1"' });
      expect(changed.status).toBe(200);
      return { answer };
    }

    const names = (items: CapabilityJson[]) => items.map((item) => `${item.kind}:${item.name}`);

    it('stores nothing of what the old address listed, and discovers the new one in the same refresh', async () => {
      const server = await movingServer();
      const { answer } = await refreshWhileMoving(server);
      expect(server.moved.toolsLists).toBe(0);
      // The old upstream answers only now, after the move.
      server.old.openToolsList();
      const refreshed = await answer;
      expect(refreshed.status).toBe(200);
      expect(names(refreshed.body.data)).toEqual(['tool:new_tool']);
      expect(server.moved.toolsLists).toBe(1);
      expect(names((await owner.client.get(`${server.path}/capabilities?includeGone=true`)).body.data)).toEqual(['tool:new_tool']);
      expect((await owner.client.get(server.path)).body.data).toMatchObject({ counts: { tools: 1 }, lastRefreshError: null, url: server.moved.url });
    });

    it('records no failure of the old address, and discovers the new one', async () => {
      const server = await movingServer();
      const { answer } = await refreshWhileMoving(server);
      // The old upstream goes away with the discovery waiting on it: that discovery fails, after the move.
      await server.old.stop();
      const refreshed = await answer;
      expect(refreshed.status).toBe(200);
      expect(names(refreshed.body.data)).toEqual(['tool:new_tool']);
      expect((await owner.client.get(server.path)).body.data).toMatchObject({ counts: { tools: 1 }, lastRefreshError: null });
    });

    it('stores nothing of what the old credential listed, and discovers again with the new one', async () => {
      // One address, whose tools depend on the credential (as an upstream's token scopes decide).
      const upstream = await startControllableUpstream(['anonymous_tool']);
      started.push(upstream);
      upstream.toolsByCredential = { 'first-credential': ['first_tool'], 'second-credential': ['second_tool'] };
      const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, {
        name: 'Rekeyed',
        slug: unique('rk'),
        url: upstream.url,
        authValue: 'first-credential',
        timeoutSeconds: 30,
      });
      expect(created.status).toBe(201);
      const path = `/v1/teams/${team}/mcp-servers/${created.body.data.id}`;
      upstream.holdToolsList = true;

      const answer = owner.client.post(`${path}/refresh`);
      await eventually(() => upstream.pendingToolsList, (pending) => pending === 1);
      const rekeyed = await owner.client.patch(path, { authValue: 'second-credential' }, { 'if-match': '"1"' });
      expect(rekeyed.status).toBe(200);
      upstream.openToolsList();

      const refreshed = await answer;
      expect(refreshed.status).toBe(200);
      expect(names(refreshed.body.data)).toEqual(['tool:second_tool']);
      expect(upstream.toolsListCredentials).toEqual(['first-credential', 'second-credential']);
      expect(names((await owner.client.get(`${path}/capabilities?includeGone=true`)).body.data)).toEqual(['tool:second_tool']);
    });
  });
});
