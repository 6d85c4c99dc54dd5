import net from 'node:net';
import { describeWith, infraUrl, platformOpsUrl, platformUrl, realInfraEnv } from '@platform/test';
import { startPlatform, type RunningPlatform } from '../src/platform';

/** A loopback port nothing listens on: Kafka there is down. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Readiness {
  status: string;
  checks: Record<string, { ok: boolean }>;
  dependencies: Record<string, { ok: boolean }>;
}

/**
 * Kafka down takes no process out of its Service: the edge's call records wait in its buffer, services' events in
 * their outboxes (docs/architecture.md, Health, readiness and ops). The bus is listed under `dependencies`.
 */
describeWith('postgres', 'readiness while the bus is down', (postgresUrl) => {
  let services: RunningPlatform;
  let edge: RunningPlatform;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const infra = await realInfraEnv({ postgres: postgresUrl(), redis: infraUrl('redis')!, kafka: infraUrl('kafka')! });
    cleanup = infra.cleanup;
    services = await startPlatform({ target: 'identity,catalog,agents,knowledge,billing,notifications', env: infra.env });
    const address = services.grpcAddress!;
    edge = await startPlatform({
      target: 'gateway',
      env: {
        ...infra.env,
        KAFKA_BROKERS: `127.0.0.1:${await closedPort()}`,
        IDENTITY_SERVICE_ADDR: address,
        CATALOG_SERVICE_ADDR: address,
        AGENTS_SERVICE_ADDR: address,
        KNOWLEDGE_SERVICE_ADDR: address,
        BILLING_SERVICE_ADDR: address,
        NOTIFICATIONS_SERVICE_ADDR: address,
      },
    });
  }, 90_000);
  afterAll(async () => {
    await edge?.stop();
    await services?.stop();
    await cleanup?.();
  });

  it('keeps an edge whose Kafka is unreachable ready and serving, the bus failing among its dependencies', async () => {
    const response = await fetch(platformOpsUrl(edge, '/readyz'));
    const body = (await response.json()) as Readiness;
    expect(response.status).toBe(200);
    expect(Object.keys(body.checks)).toEqual(['cache']);
    expect(body.dependencies.bus).toMatchObject({ ok: false });
    // It serves what goes through the services (here a sign-in refused for unknown credentials).
    const signIn = await fetch(platformUrl(edge, '/v1/auth/sign-in'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'nobody@example.test', password: 'not-a-password' }),
    });
    expect(signIn.status).toBe(401);
  }, 30_000);

  it("lists the bus among a service process's dependencies, not among what it needs", async () => {
    const body = (await (await fetch(platformOpsUrl(services, '/readyz'))).json()) as Readiness;
    expect(Object.keys(body.checks).sort()).toEqual(['cache', 'database']);
    expect(body.dependencies.bus).toEqual({ ok: true });
  });
});
