import {
  ApiClient,
  describeWith,
  expectEventually,
  gatewayFronting,
  gatewayTokens,
  infraUrl,
  memoryLogger,
  metricSum,
  postMcp,
  rawMcpSession,
  startMcpUpstream,
  startRedisRelay,
  startTestPlatform,
  TEST_ADMIN,
  type FrontedGateway,
  type McpUpstream,
  type TcpProxy,
  type TestPlatform,
} from '@platform/test';

/**
 * A whole platform (real Postgres, Redis and Kafka) whose Redis goes away, through a relay that cuts every connection
 * and refuses new ones, then comes back (docs/architecture.md, When a dependency fails). Redis holds signals,
 * counters and values that may be lost, never the truth: what does not need it keeps working (the data plane for a
 * known token, /v1 reads and writes, the token endpoint, with rate limits uncounted); sign-in, whose guessing
 * back-off Redis counts, answers 503 `unavailable`; the process stays ready, listing the cache as failing. Once Redis is back, everything follows
 * the shared generations again without a restart.
 */
describeWith('redis', 'the platform while Redis is away', () => {
  const log = memoryLogger('platform');
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => void rejections.push(reason);
  let upstream: McpUpstream;
  let relay: TcpProxy & { url: string };
  let platform: TestPlatform;
  let gateway: FrontedGateway;
  let session: string;
  let apiKey: string;
  let tokens: Awaited<ReturnType<typeof gatewayTokens>>;

  beforeAll(async () => {
    process.on('unhandledRejection', onRejection);
    upstream = await startMcpUpstream({ name: 'alpha' });
    relay = await startRedisRelay(infraUrl('redis')!);
    platform = await startTestPlatform({
      logger: log.logger,
      env: { REDIS_URL: relay.url, ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' },
    });
    gateway = await gatewayFronting(platform, 'redis-away', [{ slug: 'alpha', url: upstream.url }]);
    session = await rawMcpSession(platform, gateway);
    const key = await gateway.owner.post(`/v1/teams/${gateway.teamSlug}/api-keys`, { name: 'outage', kind: 'personal', scopes: ['query'] });
    expect(key.status).toBe(201);
    apiKey = key.body.data.key;
    tokens = await gatewayTokens(platform, gateway.owner.cookieHeader(), gateway.gatewaySlug);
  }, 120_000);

  afterAll(async () => {
    relay?.restore();
    await platform?.stop();
    await relay?.close();
    await upstream?.close();
    process.off('unhandledRejection', onRejection);
  });

  const callTool = () =>
    postMcp(platform, gateway, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'alpha__echo', arguments: { text: 'hi' } } }, session, '2025-06-18');
  const followed = (generation: string) => metricSum(platform.opsUrl('/metrics'), 'platform_shared_generation_followed', { generation });
  const refresh = (refreshToken: string) =>
    fetch(platform.url('/oauth/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: tokens.clientId }).toString(),
    });

  it('keeps serving what does not need Redis, answers sign-in 503, and says the cache is what is down', async () => {
    expect((await callTool()).status).toBe(200);
    relay.cut();

    // Still ready (it serves), the cache failing among its dependencies: unready, every pod would leave its Service.
    const ready = await fetch(platform.opsUrl('/readyz'));
    expect(ready.status).toBe(200);
    const readiness = (await ready.json()) as { checks: Record<string, { ok: boolean }>; dependencies: Record<string, { ok: boolean }> };
    expect(readiness.dependencies.cache).toMatchObject({ ok: false });
    expect(readiness.checks).toEqual({ database: { ok: true } });
    await expectEventually(async () => expect(await followed('auth')).toBe(0));

    const called = await callTool();
    expect(called.status).toBe(200);
    expect(await called.json()).toMatchObject({ result: { content: [{ type: 'text', text: 'alpha: hi' }] } });

    // A session this replica has not checked yet cannot be checked now: served, and logged now and then, not per request.
    const unchecked = () => log.lines.filter((line) => line.msg === 'could not check whether an MCP session was ended').length;
    const before = unchecked();
    const fresh = await rawMcpSession(platform, gateway);
    for (let id = 1; id <= 5; id += 1) {
      const answer = await postMcp(platform, gateway, { jsonrpc: '2.0', id, method: 'tools/list' }, fresh, '2025-06-18');
      expect(answer.status).toBe(200);
    }
    expect(unchecked() - before).toBeLessThanOrEqual(1);

    expect((await gateway.owner.get('/v1/me')).status).toBe(200);
    // Its per-minute limit cannot be counted: the request goes through uncounted.
    expect((await ApiClient.withApiKey(platform, apiKey).get('/v1/me')).status).toBe(200);
    const written = await gateway.owner.post(`/v1/teams/${gateway.teamSlug}/api-keys`, { name: 'written-while-away', kind: 'personal', scopes: ['query'] });
    expect(written.status).toBe(201);

    const refreshed = await refresh(tokens.refreshToken);
    expect(refreshed.status).toBe(200);
    const grant = (await refreshed.json()) as { access_token: string; refresh_token: string };
    expect(grant.access_token).toMatch(/^svcat_/);
    tokens = { ...tokens, accessToken: grant.access_token, refreshToken: grant.refresh_token };

    // The back-off against password guessing cannot count: sign-in is refused rather than left unguarded.
    const signIn = await new ApiClient(platform).signIn(TEST_ADMIN.email, TEST_ADMIN.password);
    expect(signIn.status).toBe(503);
    expect(signIn.body.error.code).toBe('unavailable');
  }, 60_000);

  it('recovers once Redis is back, without a restart: following both generations in memory, signing in', async () => {
    relay.restore();
    // Each connection backs off to 5 s between attempts, on its own; the probe then confirms delivery within a second
    // or two.
    await expectEventually(async () => {
      expect(await followed('auth')).toBe(1);
      expect(await followed('catalog')).toBe(1);
      expect(((await (await fetch(platform.opsUrl('/readyz'))).json()) as { dependencies: Record<string, unknown> }).dependencies.cache).toEqual({ ok: true });
    }, 30_000);
    expect((await new ApiClient(platform).signIn(TEST_ADMIN.email, TEST_ADMIN.password)).status).toBe(200);
    expect((await callTool()).status).toBe(200);
    expect((await refresh(tokens.refreshToken)).status).toBe(200);
  }, 60_000);

  it('logged no credential and left no promise rejection unhandled', () => {
    const text = log.text();
    for (const secret of [apiKey, tokens.refreshToken, tokens.accessToken, gateway.token, TEST_ADMIN.password]) expect(text).not.toContain(secret);
    expect(rejections).toEqual([]);
  });
});
