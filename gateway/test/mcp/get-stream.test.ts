import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema, PromptListChangedNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  adminClient,
  connectMcpClient,
  expectEventually,
  gatewayAccessToken,
  gatewayFronting,
  newPerson,
  rawMcpSession,
  readToEnd,
  setGatewayServers,
  startMcpUpstream,
  startTestPlatform,
  type ApiClient,
  type McpUpstream,
  type TestPlatform,
} from '@platform/test';

/**
 * The client's GET stream of `/mcp/{slug}` through the real edge and catalog (docs/gateway.md, The client's GET
 * stream): one per session, the upstream's stream kept across an upstream restart, and the gateway's own notices.
 */
describe('MCP gateway: the client GET stream', () => {
  let platform: TestPlatform;
  let upstream: McpUpstream;
  let owner: ApiClient;
  let token: string;
  let serverId: string;
  let teamSlug: string;
  let gatewaySlug: string;
  const open: Client[] = [];

  beforeAll(async () => {
    upstream = await startMcpUpstream({ name: 'alpha' });
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    const gateway = await gatewayFronting(platform, 'get', [{ slug: 'alpha', url: upstream.url }]);
    ({ owner, token, teamSlug, gatewaySlug } = gateway);
    [serverId] = gateway.serverIds as [string];
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled(open.map((client) => client.close()));
    await platform?.stop();
    await upstream?.close();
  });

  const connect = async () => {
    const { client } = await connectMcpClient(platform, gatewaySlug, token);
    open.push(client);
    return client;
  };

  /** Log messages the client receives; the upstream's `log` tool sends one on its session's GET stream. */
  const standaloneLogs = (client: Client) => {
    const logs: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      logs.push(String(notification.params.data));
    });
    return logs;
  };

  /** Calls `log` until its standalone message arrives: the client's GET stream relays the upstream's. */
  const expectRelayed = async (client: Client, logs: string[], message: string, tool = 'alpha__log') => {
    await expectEventually(async () => {
      await client.callTool({ name: tool, arguments: { message } });
      expect(logs).toContain(`${message} (standalone)`);
    });
  };

  const upstreamGets = (from = 0) => upstream.requests.slice(from).filter((request) => request.method === 'GET').map((request) => request.headers['mcp-session-id']);

  it('reopens the upstream GET stream in a fresh upstream session when the upstream forgot the session', async () => {
    const before = upstream.requests.length;
    const client = await connect();
    const logs = standaloneLogs(client);
    await expectRelayed(client, logs, 'before the restart');
    const [oldSession] = upstreamGets(before);
    expect(oldSession).toBeDefined();

    // The upstream restarts: it ends its streams and answers 404 for every session it had.
    const seen = upstream.requests.length;
    await upstream.forgetSessions();
    // The relay reconnects in the old session first and hears 404 (only the relay uses that session id now). Only
    // then does the client call again: its POST opens a fresh upstream session, whose standalone messages reach the
    // client only if the relay went on in a fresh session too, rather than stopping at the 404.
    await expectEventually(() => expect(upstreamGets(seen)).toContain(oldSession));
    await expectRelayed(client, logs, 'after the restart');
    await client.close();
  }, 60_000);

  it('refuses a second GET stream of a session while the first is open (409), and serves one again once it closed', async () => {
    const session = await rawSession();
    const before = upstream.requests.length;
    const first = await rawGet(session);
    expect(first.response.status).toBe(200);
    await expectEventually(() => expect(upstreamGets(before)).toHaveLength(1));

    const second = await rawGet(session);
    expect(second.response.status).toBe(409);
    expect(await second.response.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Conflict: Only one SSE stream is allowed per session' } });
    // Only the first stream relays: one upstream GET for the session.
    expect(upstreamGets(before)).toHaveLength(1);

    first.stop();
    // Once the edge has seen the first stream close, the session may open one again.
    await expectEventually(async () => {
      const again = await rawGet(session);
      again.stop();
      expect(again.response.status).toBe(200);
    });
  });

  it("tells the client's GET stream when the catalog changes what the gateway exposes, with no upstream notification", async () => {
    const client = await connect();
    const toolChanges: number[] = [];
    const promptChanges: number[] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      toolChanges.push(1);
    });
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
      promptChanges.push(1);
    });
    // The GET stream is up once a message sent on it arrives.
    await expectRelayed(client, standaloneLogs(client), 'stream up');

    // A catalog-only change: the gateway's composition (the server's prefix). The upstream is told nothing and says nothing.
    await setGatewayServers(owner, teamSlug, gatewaySlug, [{ serverId, prefix: 'renamed' }]);
    try {
      await expectEventually(() => {
        expect(toolChanges.length).toBeGreaterThan(0);
        expect(promptChanges.length).toBeGreaterThan(0);
      });
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('renamed__echo');
    } finally {
      await setGatewayServers(owner, teamSlug, gatewaySlug, [{ serverId }]);
      await client.close();
    }
  });

  it('ends an open GET stream when the person may no longer use the gateway (the gateway disabled), at once', async () => {
    const session = await rawSession();
    const before = upstream.requests.length;
    const stream = await rawGet(session);
    expect(stream.response.status).toBe(200);
    await expectEventually(() => expect(upstreamGets(before)).toHaveLength(1));
    const ended = readToEnd(stream.response);

    const gateway = await gatewayOf(gatewaySlug);
    const disabled = await owner.patch(`/v1/teams/${teamSlug}/gateways/${gateway.id}`, { enabled: false }, { 'if-match': `"${gateway.revision}"` });
    expect(disabled.status).toBe(200);
    try {
      // Nothing else is sent on the stream: it ends because access was checked again, not because a request failed.
      // Cleanly (docs/gateway.md, The client's GET stream): a complete response, not a reset.
      expect(await ended).toBe('ended');
      expect((await rawGet(session)).response.status).toBe(404);
    } finally {
      const current = await gatewayOf(gatewaySlug);
      await owner.patch(`/v1/teams/${teamSlug}/gateways/${current.id}`, { enabled: true }, { 'if-match': `"${current.revision}"` });
    }
  });

  it('ends an open GET stream cleanly when its person leaves the team (their access checked again), and refuses the next', async () => {
    const admin = await adminClient(platform);
    const member = await newPerson(platform, admin, 'member');
    expect((await owner.post(`/v1/teams/${teamSlug}/members`, { personId: member.id, role: 'member' })).status).toBe(201);
    const memberToken = await gatewayAccessToken(platform, member.client.cookieHeader(), gatewaySlug);
    const session = await rawMcpSession(platform, { gatewaySlug, token: memberToken });
    const before = upstream.requests.length;
    const stream = await rawGet(session, memberToken);
    expect(stream.response.status).toBe(200);
    await expectEventually(() => expect(upstreamGets(before)).toHaveLength(1));
    const ended = readToEnd(stream.response);

    // Only the auth generation moves (the catalog is untouched): the stream's own access check ends it.
    expect((await owner.delete(`/v1/teams/${teamSlug}/members/${member.id}`)).status).toBe(204);
    expect(await ended).toBe('ended');
    // A valid token of the gateway whose person may no longer use it: 404 (docs/gateway.md, the resource-server check).
    expect((await rawGet(session, memberToken)).response.status).toBe(404);
  });

  it('tells the GET streams of the gateways naming a server when its refresh hides a tool, and not those of other gateways', async () => {
    const other = await startMcpUpstream({ name: 'beta' });
    const x = await connect();
    try {
      const y = await gatewayFronting(platform, 'get-other', [{ slug: 'beta', url: other.url }]);
      const yClient = (await connectMcpClient(platform, y.gatewaySlug, y.token)).client;
      open.push(yClient);
      // Upstreams relay their own tools/list_changed; a prompts/list_changed is the gateway's notice of a catalog change.
      const xNotices = gatewayNotices(x);
      const yNotices = gatewayNotices(yClient);
      await expectRelayed(x, standaloneLogs(x), 'x stream up');
      const yLogs = standaloneLogs(yClient);
      await expectRelayed(yClient, yLogs, 'y stream up', 'beta__log');
      // Notices of the setup (Y's server published) arrived before the messages relayed after them.
      xNotices.length = 0;
      yNotices.length = 0;

      // The approved echo of gateway X's server changes upstream: the refresh hides it, in X alone.
      upstream.redefineEcho('Echoes text back, and also exfiltrates it');
      expect((await owner.post(`/v1/teams/${teamSlug}/mcp-servers/${serverId}/refresh`, {})).status).toBe(200);
      await expectEventually(() => expect(xNotices.length).toBeGreaterThan(0));
      expect((await x.listTools()).tools.map((tool) => tool.name)).not.toContain('alpha__echo');

      // One announcement reaches every stream of this edge at once (X's notice is there, so it was heard): a message
      // relayed on Y's stream after that, a few round trips later, follows any notice Y was sent for it.
      await expectRelayed(yClient, yLogs, 'after the refresh', 'beta__log');
      expect(yNotices).toHaveLength(0);
    } finally {
      // Back as approved: the echo is exposed again (the other tests call it).
      upstream.redefineEcho('Echoes text back (alpha)');
      await owner.post(`/v1/teams/${teamSlug}/mcp-servers/${serverId}/refresh`, {});
      await x.close();
      await other.close();
    }
  }, 60_000);

  /** The gateway's own notices of catalog changes a client receives (see above: prompts/list_changed). */
  const gatewayNotices = (client: Client) => {
    const notices: number[] = [];
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
      notices.push(1);
    });
    return notices;
  };

  async function gatewayOf(slug: string): Promise<{ id: string; revision: number }> {
    const listed = (await owner.get(`/v1/teams/${teamSlug}/gateways?limit=100`)).body.data as { id: string; slug: string; revision: number }[];
    return listed.find((gateway) => gateway.slug === slug)!;
  }

  const rawSession = () => rawMcpSession(platform, { gatewaySlug, token });

  async function rawGet(session: string, bearer = token): Promise<{ response: Response; stop(): void }> {
    const controller = new AbortController();
    const response = await fetch(platform.url(`/mcp/${gatewaySlug}`), {
      headers: { authorization: `Bearer ${bearer}`, accept: 'text/event-stream', 'mcp-session-id': session },
      signal: controller.signal,
    });
    return { response, stop: () => controller.abort() };
  }
});
