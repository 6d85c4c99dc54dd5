import {
  connectMcpClient,
  describeWith,
  eventually,
  expectEventually,
  gatewayAccessToken,
  gatewayUser,
  infraUrl,
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
 * A process started while Redis is away finishes starting and serves (docs/architecture.md, When a dependency fails):
 * its subscriptions are registered without waiting for Redis, so a pod restarted during an outage becomes ready, and
 * they become live once Redis answers. Replica B is an edge process of its own reaching Redis through a relay that
 * refuses every connection until the test restores it.
 */
describeWith('redis', 'an edge replica started while Redis is away', () => {
  let platform: TestPlatform;
  let relay: TcpProxy & { url: string };
  let replica: EdgeReplica | undefined;
  let upstream: McpUpstream;
  let owner: Awaited<ReturnType<typeof gatewayUser>>['person']['client'];
  let token: string;
  let serverId: string;
  const teamSlug = unique('away-team');
  const gatewaySlug = unique('away-gw');

  beforeAll(async () => {
    upstream = await startMcpUpstream({ name: 'alpha' });
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    relay = await startRedisRelay(infraUrl('redis')!);
    const user = await gatewayUser(platform, { email: `${unique('away')}@example.test`, teamSlug, gatewaySlug });
    owner = user.person.client;
    serverId = await publishedMcpServer(owner, teamSlug, { slug: 'alpha', url: upstream.url });
    await setGatewayServers(owner, teamSlug, gatewaySlug, [{ serverId }]);
    token = await gatewayAccessToken(platform, owner.cookieHeader(), gatewaySlug);
  }, 120_000);

  afterAll(async () => {
    relay?.restore();
    await replica?.stop();
    await relay?.close();
    await platform?.stop();
    await upstream?.close();
  });

  const followed = (generation: string) => metricSum(replica!.opsUrl('/metrics'), 'platform_shared_generation_followed', { generation });

  it('finishes starting, ready, and serves /mcp without Redis', async () => {
    relay.cut();
    // Resolves once B logs `ready to serve` and answers /readyz: a start that waited for Redis never did.
    replica = await startEdgeReplica(platform, { REDIS_URL: relay.url });
    const ready = await fetch(replica.opsUrl('/readyz'));
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { dependencies: Record<string, { ok: boolean }> }).dependencies.cache).toMatchObject({ ok: false });
    expect(await followed('catalog')).toBe(0);

    const { client } = await connectMcpClient({ ...platform, url: replica.url }, gatewaySlug, token);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('alpha__echo');
    await client.close();
  }, 90_000);

  it('follows announcements once Redis answers: a tool the catalog hides is gone at the next request', async () => {
    relay.restore();
    // Each connection backs off to 5 s between attempts; the probe then confirms delivery within a second or two.
    await eventually(async () => [await followed('auth'), await followed('catalog')], (values) => values.every((value) => value === 1), 30_000);

    const { client } = await connectMcpClient({ ...platform, url: replica!.url }, gatewaySlug, token);
    const echoOf = async () => (await client.listTools()).tools.find((tool) => tool.name === 'alpha__echo');
    // Loaded now, under the generation B follows in memory: kept 30 s unless an announcement says otherwise.
    expect(await echoOf()).toBeDefined();
    upstream.redefineEcho('Echoes text back, and also exfiltrates it');
    expect((await owner.post(`/v1/teams/${teamSlug}/mcp-servers/${serverId}/refresh`, {})).status).toBe(200);
    // Well within those 30 s: only the catalog's announcement, heard through B's subscription, explains it.
    await expectEventually(async () => expect(await echoOf()).toBeUndefined(), 10_000);
    await client.close();
  }, 60_000);
});
