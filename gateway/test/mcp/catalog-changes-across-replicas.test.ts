import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectionName } from '@platform/runtime';
import {
  connectMcpClient,
  describeWith,
  eventually,
  expectEventually,
  gatewayAccessToken,
  gatewayUser,
  infraUrl,
  killRedisConnections,
  metricSum,
  publishedMcpServer,
  setGatewayServers,
  startEdgeReplica,
  startMcpUpstream,
  startRedisRelay,
  startTestPlatform,
  unique,
  type EdgeReplica,
  type McpUpstream,
  type TcpProxy,
  type TestPlatform,
} from '@platform/test';

/**
 * Each edge remembers what its gateways expose while the catalog generation it loaded them under is current
 * (docs/gateway.md, What is exposed). A replica whose announcements stop arriving must still not serve a capability the
 * catalog hid: it notices the stall (its probe is overdue) and from then on reads the generation from Redis at
 * every request. Replica B is a process of its own (it learns of changes only as another pod would) and reaches Redis
 * through a relay that can stall its subscriber connection without closing it.
 */
describeWith('redis', 'MCP gateway: catalog changes on a replica whose announcements stall', () => {
  let platform: TestPlatform;
  let proxy: TcpProxy & { url: string };
  let replica: EdgeReplica;
  let upstream: McpUpstream;
  let owner: Awaited<ReturnType<typeof gatewayUser>>['person']['client'];
  let token: string;
  let serverId: string;
  const teamSlug = unique('stall-team');
  const gatewaySlug = unique('stall-gw');

  beforeAll(async () => {
    upstream = await startMcpUpstream({ name: 'alpha' });
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    proxy = await startRedisRelay(infraUrl('redis')!);
    replica = await startEdgeReplica(platform, { REDIS_URL: proxy.url });
    const user = await gatewayUser(platform, { email: `${unique('stall')}@example.test`, teamSlug, gatewaySlug });
    owner = user.person.client;
    serverId = await publishedMcpServer(owner, teamSlug, { slug: 'alpha', url: upstream.url });
    await setGatewayServers(owner, teamSlug, gatewaySlug, [{ serverId }]);
    token = await gatewayAccessToken(platform, owner.cookieHeader(), gatewaySlug);
  }, 120_000);

  afterAll(async () => {
    proxy?.thaw();
    await replica?.stop();
    await proxy?.close();
    await platform?.stop();
    await upstream?.close();
  });

  /** A sample of replica B's catalog generation metrics (its /metrics), e.g. `followed()` is 1 while it follows it in memory. */
  const catalogMetric = (name: string, labels: Record<string, string> = {}) => metricSum(replica.opsUrl('/metrics'), name, { generation: 'catalog', ...labels });
  const stalls = () => catalogMetric('platform_shared_generation_lapses_total', { reason: 'stalled' });
  const followed = () => catalogMetric('platform_shared_generation_followed');

  it('hides a changed tool without waiting for the 30 s expiry, and shows its approval at the next request', async () => {
    const { client } = await connectMcpClient({ ...platform, url: replica.url }, gatewaySlug, token);
    const echoOf = async () => (await client.listTools()).tools.find((tool) => tool.name === 'alpha__echo');
    expect(await echoOf()).toBeDefined();
    const stallsBefore = await stalls();

    // Replica B stops hearing announcements; nothing tells it so but its own overdue probe.
    expect(proxy.freeze('SUBSCRIBE')).toBeGreaterThan(0);
    upstream.redefineEcho('Echoes text back, and also exfiltrates it');
    expect((await owner.post(`/v1/teams/${teamSlug}/mcp-servers/${serverId}/refresh`, {})).status).toBe(200);
    // B notices the stall (a probe overdue: about 2.5 s, however long that takes here) and from then on reads the
    // generation, which the refresh moved, at every request: the very next list no longer has the tool. What B
    // remembers would only expire 30 s after it was loaded; which of the two hid the tool is not left to timing:
    // the approval below shows at the next request only if B reads the generation at every request.
    await eventually(stalls, (count) => count > stallsBefore);
    expect(await followed()).toBe(0);
    expect(await echoOf()).toBeUndefined();
    await expect(client.callTool({ name: 'alpha__echo', arguments: { text: 'x' } })).rejects.toMatchObject({ code: -32602 });

    // Still stalled, B reads the generation at every request: the approval shows at the very next one.
    const capabilities = (await owner.get(`/v1/teams/${teamSlug}/mcp-servers/${serverId}/capabilities`)).body.data as { id: string; name: string; kind: string }[];
    const echo = capabilities.find((capability) => capability.kind === 'tool' && capability.name === 'echo')!;
    expect((await owner.put(`/v1/teams/${teamSlug}/mcp-servers/${serverId}/capabilities/${echo.id}/approval`)).status).toBe(200);
    expect((await echoOf())?.description).toBe('Echoes text back, and also exfiltrates it');

    proxy.thaw();
    await client.close();
  }, 60_000);

  it('tells connected clients that lists may have changed once it trusts its subscription again after losing it', async () => {
    // B trusts its subscription again after the stall above (so that resumption's notices are not counted below).
    await eventually(followed, (value) => value === 1);
    // An SDK client whose GET stream is open once B has answered it: B listens for catalog changes for the stream
    // before it sends the answer's headers (gateway/src/mcp/stream.ts).
    let streamOpen!: () => void;
    const opened = new Promise<void>((resolve) => (streamOpen = resolve));
    const client = new Client({ name: 'gateway-test-client', version: '1.0.0' }, { capabilities: {} });
    const transport = new StreamableHTTPClientTransport(new URL(replica.url(`/mcp/${gatewaySlug}`)), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
      fetch: async (url, init) => {
        const response = await fetch(url, init);
        if (init?.method === 'GET' && response.status === 200) streamOpen();
        return response;
      },
    });
    let listChanges = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      listChanges += 1;
    });
    await client.connect(transport);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await opened;
    const before = listChanges;

    // Both replicas share the key prefix: this drops B's subscriber connection too (through the relay). Whatever
    // was announced meanwhile is lost to B, so once re-subscribed it tells its clients that anything may have changed.
    const redisUrl = infraUrl('redis')!;
    expect(await killRedisConnections(redisUrl, connectionName(platform.env.REDIS_KEY_PREFIX ?? '', 'subscriber'))).toBeGreaterThanOrEqual(2);
    await expectEventually(() => expect(listChanges).toBeGreaterThan(before));
    await client.close();
  }, 60_000);
});
