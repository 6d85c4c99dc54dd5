import { describeWith, infraUrl, memoryLogger, platformOpsUrl, platformUrl, realInfraEnv } from '@platform/test';
import { startPlatform, type RunningPlatform } from '../src/platform';

/**
 * The Kubernetes shape: services in one process, the edge in another, joined only by gRPC addresses, on real
 * Postgres, Redis and Kafka.
 */
describeWith('postgres', 'services and the edge in separate processes', (postgresUrl) => {
  let services: RunningPlatform;
  let edge: RunningPlatform;
  let cleanup: () => Promise<void>;
  const edgeLog = memoryLogger('edge');

  beforeAll(async () => {
    const infra = await realInfraEnv({ postgres: postgresUrl(), redis: infraUrl('redis')!, kafka: infraUrl('kafka')! });
    cleanup = infra.cleanup;
    services = await startPlatform({ target: 'identity,catalog,agents,knowledge,billing,notifications', env: infra.env });
    const address = services.grpcAddress!;
    edge = await startPlatform({
      target: 'gateway',
      logger: edgeLog.logger,
      env: {
        ...infra.env,
        IDENTITY_SERVICE_ADDR: address,
        CATALOG_SERVICE_ADDR: address,
        AGENTS_SERVICE_ADDR: address,
        KNOWLEDGE_SERVICE_ADDR: address,
        BILLING_SERVICE_ADDR: address,
        NOTIFICATIONS_SERVICE_ADDR: address,
      },
    });
  }, 60_000);
  afterAll(async () => {
    await edge?.stop();
    await services?.stop();
    await cleanup?.();
  });

  it('uses the real adapters', () => {
    expect(services.context.config.storage.kind).toBe('postgres');
    expect(services.context.config.cache.kind).toBe('redis');
    expect(services.context.config.bus.kind).toBe('kafka');
  });

  it('makes the edge ready, with every remote service serving among its dependencies', async () => {
    const response = await fetch(platformOpsUrl(edge, '/readyz'));
    expect(response.status).toBe(200);
    const body = (await response.json()) as { checks: Record<string, { ok: boolean }>; dependencies: Record<string, { ok: boolean }> };
    // What the edge uses itself; the database the module graph opens is only listed.
    expect(Object.keys(body.checks).sort()).toEqual(['cache']);
    expect(body.dependencies.bus).toEqual({ ok: true });
    expect(body.dependencies['service:notifications']).toEqual({ ok: true });
    expect(body.dependencies.database).toEqual({ ok: true });
  });

  it('gives the service process its health, readiness and metrics on the ops port, and no public HTTP listener', async () => {
    expect(services.httpPort).toBeUndefined();
    expect((await fetch(platformOpsUrl(services, '/healthz'))).status).toBe(200);
    expect((await fetch(platformOpsUrl(services, '/readyz'))).status).toBe(200);
    expect((await fetch(platformOpsUrl(services, '/metrics'))).status).toBe(200);
    expect((await fetch(platformOpsUrl(services, '/v1/openapi.json'))).status).toBe(404);
    expect((await fetch(platformUrl(edge, '/metrics'))).status).toBe(404);
  });

  it('keeps the edge ready when the services go away, reporting them unavailable as dependencies', async () => {
    await services.stop();
    const response = await fetch(platformOpsUrl(edge, '/readyz'));
    expect(response.status).toBe(200);
    const body = (await response.json()) as { status: string; dependencies: Record<string, { ok: boolean; error?: string }> };
    expect(body.status).toBe('ok');
    for (const name of ['identity', 'catalog', 'agents', 'knowledge', 'billing', 'notifications']) {
      expect(body.dependencies[`service:${name}`]).toMatchObject({ ok: false });
    }
    // The answer names what failed; the edge's log says so too, for whoever reads it later.
    const failed = edgeLog.lines.filter((line) => line.msg === 'readiness check failed').map((line) => line.check);
    expect(failed).toEqual(expect.arrayContaining(['service:identity', 'service:catalog']));
  });
});
