import { describeWith, freePort, infraUrl, memoryLogger, platformOpsUrl, platformUrl, realInfraEnv, servicesAt } from '@platform/test';
import { startPlatform, type RunningPlatform } from '../src/platform';

/**
 * The Kubernetes shape: services in one process, the edge in another, joined only by gRPC addresses, on real
 * Postgres, Redis and Kafka.
 */
describeWith('postgres', 'services and the edge in separate processes', (postgresUrl) => {
  let services: RunningPlatform;
  let edge: RunningPlatform;
  let cleanup: () => Promise<void>;
  let infraEnv: NodeJS.ProcessEnv;
  const edgeLog = memoryLogger('edge');

  beforeAll(async () => {
    const infra = await realInfraEnv({ postgres: postgresUrl(), redis: infraUrl('redis')!, kafka: infraUrl('kafka')! });
    cleanup = infra.cleanup;
    infraEnv = infra.env;
    services = await startPlatform({ target: 'identity,catalog,agents,knowledge,billing,notifications', env: infra.env });
    const address = services.grpcAddress!;
    edge = await startPlatform({
      target: 'gateway',
      logger: edgeLog.logger,
      env: { ...infra.env, ...servicesAt(address) },
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
    // The edge requires nothing: the cache, the bus and the database the module graph opens are only listed.
    expect(Object.keys(body.checks)).toEqual([]);
    expect(body.dependencies.cache).toEqual({ ok: true });
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

  // Kafka down takes no process out of its Service: the edge's call records wait in its buffer, services' events in
  // their outboxes (docs/architecture.md, Health, readiness and ops).
  it('keeps an edge whose Kafka is unreachable ready and serving, the bus failing among its dependencies', async () => {
    const cutOff = await startPlatform({ target: 'gateway', env: { ...infraEnv, ...servicesAt(services.grpcAddress!), KAFKA_BROKERS: `127.0.0.1:${await freePort()}` } });
    try {
      const response = await fetch(platformOpsUrl(cutOff, '/readyz'));
      const body = (await response.json()) as Readiness;
      expect(response.status).toBe(200);
      expect(Object.keys(body.checks)).toEqual([]);
      expect(body.dependencies.bus).toMatchObject({ ok: false });
      // It serves what goes through the services (here a sign-in refused for unknown credentials).
      const signIn = await fetch(platformUrl(cutOff, '/v1/auth/sign-in'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'nobody@example.test', password: 'not-a-password' }),
      });
      expect(signIn.status).toBe(401);
    } finally {
      await cutOff.stop();
    }
  }, 60_000);

  it("lists the bus and the cache among a service process's dependencies, not among what it needs", async () => {
    const body = (await (await fetch(platformOpsUrl(services, '/readyz'))).json()) as Readiness;
    expect(Object.keys(body.checks)).toEqual(['database']);
    expect(body.dependencies.bus).toEqual({ ok: true });
    expect(body.dependencies.cache).toEqual({ ok: true });
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

interface Readiness {
  status: string;
  checks: Record<string, { ok: boolean }>;
  dependencies: Record<string, { ok: boolean }>;
}
