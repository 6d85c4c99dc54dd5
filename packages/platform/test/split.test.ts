import { describeWith, infraUrl, platformUrl, realInfraEnv } from '@platform/test';
import { startPlatform, type RunningPlatform } from '../src/platform';

/**
 * The Kubernetes shape: services in one process, the edge in another, joined only by gRPC addresses, on real
 * Postgres, Redis and Kafka.
 */
describeWith('postgres', 'services and the edge in separate processes', (postgresUrl) => {
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

  it('makes the edge ready once every remote service is serving', async () => {
    const response = await fetch(platformUrl(edge, '/readyz'));
    expect(response.status).toBe(200);
  });

  it('gives the service process its own health, readiness and metrics on PORT', async () => {
    expect((await fetch(platformUrl(services, '/healthz'))).status).toBe(200);
    expect((await fetch(platformUrl(services, '/readyz'))).status).toBe(200);
    expect((await fetch(platformUrl(services, '/metrics'))).status).toBe(200);
    expect((await fetch(platformUrl(services, '/v1/openapi.json'))).status).toBe(404);
  });

  it('makes the edge unready when the services go away', async () => {
    await services.stop();
    const response = await fetch(platformUrl(edge, '/readyz'));
    expect(response.status).toBe(503);
  });
});
