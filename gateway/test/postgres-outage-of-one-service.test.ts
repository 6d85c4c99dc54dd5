import { startPlatform, type RunningPlatform } from '@platform/platform/src/platform';
import {
  asTestPlatform,
  describeWith,
  eventually,
  expectEventually,
  freePort,
  gatewayFronting,
  infraUrl,
  memoryLogger,
  postMcp,
  rawMcpSession,
  realInfraEnv,
  startMcpUpstream,
  startPostgresRelay,
  TEST_ADMIN,
  type FrontedGateway,
  type McpUpstream,
  type TcpProxy,
  type TestPlatform,
} from '@platform/test';

/**
 * One service's PostgreSQL goes away: the catalog runs in a process of its own whose database is reached through a
 * relay that cuts every connection and refuses new ones, beside a process with the edge and the other services
 * (docs/architecture.md, When a dependency fails). The edge keeps serving the gateways it has resolved while it may
 * remember them, the catalog's routes answer 503 `unavailable` (they answered 500 `internal`), the other services are
 * untouched, and once the database is back the catalog's consumer and outbox relay resume, each event taking effect
 * once.
 */
describeWith('postgres', "a service's PostgreSQL outage", (postgresUrl) => {
  const catalogLog = memoryLogger('catalog');
  let upstream: McpUpstream;
  let relay: TcpProxy & { url: string };
  let catalog: RunningPlatform;
  let main: RunningPlatform;
  let platform: TestPlatform;
  let cleanup: () => Promise<void>;
  let gateway: FrontedGateway;
  let session: string;
  /** Tool calls the data plane answered (each has a call record to store). */
  let answered = 0;

  beforeAll(async () => {
    upstream = await startMcpUpstream({ name: 'alpha' });
    const infra = await realInfraEnv({ postgres: postgresUrl(), redis: infraUrl('redis')!, kafka: infraUrl('kafka')! });
    cleanup = infra.cleanup;
    relay = await startPostgresRelay(infra.env.DATABASE_URL!);
    // Each process must know the other's gRPC address before it starts.
    const [catalogPort, mainPort] = [await freePort(), await freePort()];
    const env = { ...infra.env, ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish', MCP_HEALTH_CHECK_SECONDS: '0', MCP_REFRESH_SECONDS: '0' };
    const elsewhere = Object.fromEntries(['IDENTITY', 'AGENTS', 'KNOWLEDGE', 'BILLING', 'NOTIFICATIONS'].map((name) => [`${name}_SERVICE_ADDR`, `127.0.0.1:${mainPort}`]));
    catalog = await startPlatform({ target: 'catalog', logger: catalogLog.logger, env: { ...env, ...elsewhere, DATABASE_URL: relay.url, GRPC_PORT: String(catalogPort) } });
    main = await startPlatform({
      target: 'gateway,identity,agents,knowledge,billing,notifications',
      env: { ...env, GRPC_PORT: String(mainPort), CATALOG_SERVICE_ADDR: `127.0.0.1:${catalogPort}`, BOOTSTRAP_ADMIN_EMAIL: TEST_ADMIN.email, BOOTSTRAP_ADMIN_PASSWORD: TEST_ADMIN.password },
    });
    platform = asTestPlatform(main, env, () => main.stop());
    gateway = await gatewayFronting(platform, 'pg-away', [{ slug: 'alpha', url: upstream.url }]);
    session = await rawMcpSession(platform, gateway);
  }, 120_000);

  afterAll(async () => {
    relay?.restore();
    await main?.stop();
    await catalog?.stop();
    await relay?.close();
    await cleanup?.();
    await upstream?.close();
  });

  async function callTool(): Promise<Response> {
    const response = await postMcp(platform, gateway, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'alpha__echo', arguments: { text: 'hi' } } }, session, '2025-06-18');
    if (response.status === 200) answered += 1;
    return response;
  }
  const catalogReadiness = async () => (await fetch(`http://127.0.0.1:${catalog.opsPort}/readyz`)).json() as Promise<{ checks: Record<string, { ok: boolean }> }>;
  const newServer = () => gateway.owner.post(`/v1/teams/${gateway.teamSlug}/mcp-servers`, { name: 'Later', slug: `later-${answered}`, url: upstream.url });

  it("serves the gateways the edge resolved, answers the catalog's routes 503, and leaves the other services alone", async () => {
    expect((await callTool()).status).toBe(200);
    relay.cut();

    expect((await callTool()).status).toBe(200);
    expect((await callTool()).status).toBe(200);
    for (const refused of [await gateway.owner.get(`/v1/teams/${gateway.teamSlug}/gateways`), await newServer()]) {
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('unavailable');
    }
    expect((await gateway.owner.get('/v1/me')).status).toBe(200);
    expect((await gateway.owner.post(`/v1/teams/${gateway.teamSlug}/api-keys`, { name: 'while-away', kind: 'personal', scopes: ['query'] })).status).toBe(201);

    expect((await catalogReadiness()).checks.database).toMatchObject({ ok: false });
    // The callers saw "unavailable"; the catalog's log says what it met (the driver's error), now and then.
    const outages = catalogLog.lines.filter((line) => line.msg === 'gRPC handler met a dependency outage');
    expect(outages.length).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(outages[0])).toMatch(/ECONNREFUSED|Connection terminated|ECONNRESET|timeout/);
    const edgeReady = await fetch(platform.opsUrl('/readyz'));
    expect(edgeReady.status).toBe(200);
    await expectEventually(async () => {
      const body = (await (await fetch(platform.opsUrl('/readyz'))).json()) as { dependencies: Record<string, { ok: boolean }> };
      expect(body.dependencies['service:catalog']).toMatchObject({ ok: false });
      expect(body.dependencies['service:identity']).toEqual({ ok: true });
    });
  }, 60_000);

  it('answers the data plane 503 once what the edge remembered about the gateway has expired', async () => {
    // AUTH_CACHE_SECONDS (10 s) for the token's gateway access, 30 s for the exposure: the catalog is asked again.
    const refused = await eventually(callTool, (response) => response.status !== 200, 60_000);
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('unavailable');
  }, 90_000);

  it('resumes the consumer and the outbox relay once the database is back, each event taking effect once', async () => {
    relay.restore();
    await expectEventually(async () => expect((await catalogReadiness()).checks.database).toEqual({ ok: true }), 30_000);
    await expectEventually(async () => expect((await callTool()).status).toBe(200), 30_000);

    // Every answered call's record is stored once: those published while the consumer's database was away included.
    const okRecords = async () => {
      const listed = await gateway.owner.get(`/v1/teams/${gateway.teamSlug}/calls?limit=100`);
      expect(listed.status).toBe(200);
      return (listed.body.data as { requestId: string; method: string; outcome: string }[]).filter((record) => record.method === 'tools/call' && record.outcome === 'ok');
    };
    await expectEventually(async () => expect(await okRecords()).toHaveLength(answered), 30_000);
    // Given time to arrive twice, none does.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const records = await okRecords();
    expect(records).toHaveLength(answered);
    expect(new Set(records.map((record) => record.requestId)).size).toBe(answered);

    // A change now reaches identity's audit store through the catalog's outbox and the bus.
    const created = await newServer();
    expect(created.status).toBe(201);
    await expectEventually(async () => {
      const audit = await gateway.owner.get(`/v1/teams/${gateway.teamSlug}/audit?limit=100`);
      expect((audit.body.data as { targetId?: string; target?: { id?: string } }[]).some((entry) => JSON.stringify(entry).includes(created.body.data.id))).toBe(true);
    }, 30_000);
  }, 120_000);
});
