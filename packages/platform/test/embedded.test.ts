import { openApiProblems } from '@platform/test';
import { startPlatform, type RunningPlatform } from '../src/platform';
import { checkHealth, OVERALL_HEALTH, type ReadinessCheck } from '@platform/runtime';
import { embeddedEnv, expectEventually, platformOpsUrl, platformUrl } from '@platform/test';

/**
 * What a newcomer gets from `npm start`: every module in one process on embedded PGlite, the in-process bus
 * and the in-memory cache, with the services reached over real gRPC.
 */
describe('--target=all with no configuration', () => {
  const { env, cleanup } = embeddedEnv();
  let platform: RunningPlatform;

  beforeAll(async () => {
    platform = await startPlatform({ target: 'all', env });
  }, 60_000);
  afterAll(async () => {
    await platform?.stop();
    await cleanup();
  });

  it('uses the embedded adapters', () => {
    expect(platform.context.config.storage.kind).toBe('pglite');
    expect(platform.context.config.cache.kind).toBe('memory');
    expect(platform.context.config.bus.kind).toBe('memory');
  });

  it("is live and ready on the ops listener, listing each service's gRPC health apart from what readiness requires", async () => {
    expect((await fetch(platformOpsUrl(platform, '/healthz'))).status).toBe(200);
    const ready = await fetch(platformOpsUrl(platform, '/readyz'));
    const body = (await ready.json()) as { status: string; checks: Record<string, { ok: boolean }>; dependencies: Record<string, { ok: boolean }> };
    expect(ready.status).toBe(200);
    expect(Object.keys(body.checks)).toEqual(['database']);
    expect(Object.keys(body.dependencies).sort()).toEqual(
      ['bus', 'cache', ...['agents', 'billing', 'catalog', 'identity', 'knowledge', 'notifications'].map((s) => `service:${s}`)].sort(),
    );
    expect(Object.values({ ...body.checks, ...body.dependencies }).every((c) => c.ok)).toBe(true);
  });

  it('keeps /readyz and /metrics off the public port, which answers only a cheap /healthz', async () => {
    expect(platform.opsPort).not.toBe(platform.httpPort);
    expect((await fetch(platformUrl(platform, '/healthz'))).status).toBe(200);
    expect((await fetch(platformUrl(platform, '/readyz'))).status).toBe(404);
    expect((await fetch(platformUrl(platform, '/metrics'))).status).toBe(404);
  });

  it('serves a valid OpenAPI 3.1 document', async () => {
    const response = await fetch(platformUrl(platform, '/v1/openapi.json'));
    expect(response.status).toBe(200);
    const document = (await response.json()) as { openapi: string };
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(await openApiProblems(document)).toEqual([]);
  });

  it('describes the int64 path ids of ops 6 and 12 as integers (int64 >= 1), though they are read as text', async () => {
    const document = (await (await fetch(platformUrl(platform, '/v1/openapi.json'))).json()) as OpenApiPaths;
    for (const [path, name] of [
      ['/v1/teams/{team}/calls/{callId}', 'callId'],
      ['/v1/teams/{team}/audit/{entryId}', 'entryId'],
    ] as const) {
      const parameter = document.paths[path]!.get!.parameters!.find((p) => p.name === name);
      expect([name, parameter?.schema]).toEqual([name, expect.objectContaining({ type: 'integer', format: 'int64', minimum: 1 })]);
    }
  });

  it("describes a capability approval's optional fingerprint If-Match, its ETag and 412, never 428", async () => {
    const document = (await (await fetch(platformUrl(platform, '/v1/openapi.json'))).json()) as OpenApiPaths;
    for (const path of [
      '/v1/teams/{team}/mcp-servers/{serverId}/capabilities/{capabilityId}/approval',
      '/v1/admin/mcp-servers/{serverId}/capabilities/{capabilityId}/approval',
    ]) {
      const approval = document.paths[path]!.put!;
      expect(approval.parameters).toContainEqual(expect.objectContaining({ name: 'If-Match', in: 'header', required: false }));
      expect(approval.responses['200']!.headers!.ETag!.description).toMatch(/fingerprint/);
      expect(approval.responses['412']).toBeDefined();
      expect(approval.responses['428']).toBeUndefined();
    }
  });

  it('answers an unknown route with the one error body', async () => {
    const response = await fetch(platformUrl(platform, '/v1/no-such-thing'));
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { code: string; requestId: string } };
    expect(body.error.code).toBe('not_found');
    expect(body.error.requestId).toBe(response.headers.get('x-request-id'));
  });

  it("exposes Prometheus metrics on the ops listener, the edge's requests among them", async () => {
    await fetch(platformUrl(platform, '/v1/openapi.json'));
    const response = await fetch(platformOpsUrl(platform, '/metrics'));
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(/platform_http_request_duration_seconds_count\{method="GET",route="\/v1\/openapi.json",status="200"\} \d+/);
  });

  it("follows its readiness checks in the services' gRPC health: NOT_SERVING while one fails, SERVING once it passes", async () => {
    let failing = true;
    const flaky: ReadinessCheck = {
      name: 'flaky',
      check: async () => {
        if (failing) throw new Error('down');
      },
    };
    platform.context.readiness.push(flaky);
    const address = platform.grpcAddress!;
    try {
      // The process's rounds run every few seconds; each is awaited here rather than timed.
      await expectEventually(async () => expect(await checkHealth(address, 'platform.billing.v1.BillingService')).toBe(false), 20_000);
      expect(await checkHealth(address, OVERALL_HEALTH)).toBe(false);
      expect((await fetch(platformOpsUrl(platform, '/readyz'))).status).toBe(503);
      failing = false;
      await expectEventually(async () => expect(await checkHealth(address, 'platform.billing.v1.BillingService')).toBe(true), 20_000);
      expect(await checkHealth(address, OVERALL_HEALTH)).toBe(true);
    } finally {
      platform.context.readiness.splice(platform.context.readiness.indexOf(flaky), 1);
    }
  }, 60_000);

  it('applied each service its migrations and reports them over gRPC', async () => {
    const clients = platform.context;
    expect(clients.localGrpcAddress).toMatch(/^127\.0\.0\.1:\d+$/);
    const { createServiceClients } = await import('@platform/runtime');
    const direct = createServiceClients({
      resolveAddress: () => platform.grpcAddress!,
      deadlineMs: 5_000,
      logger: platform.context.logger,
    });
    try {
      const status = await direct.billing.getServiceStatus({});
      expect(status).toMatchObject({ service: 'billing', schemaVersion: '0001_init' });
      expect((await direct.identity.getServiceStatus({})).service).toBe('identity');
    } finally {
      await direct.close();
    }
  });
});

interface OpenApiParameter {
  name: string;
  schema: Record<string, unknown>;
}

interface OpenApiPaths {
  paths: Record<
    string,
    Record<string, { parameters?: OpenApiParameter[]; responses: Record<string, { headers?: Record<string, { description: string }> }> }>
  >;
}
