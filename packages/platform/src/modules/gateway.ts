import { createEdge } from '@platform/gateway';
import {
  checkHealth,
  createRateLimiter,
  runReadinessChecks,
  SERVICE_NAMES,
  type Cache,
  type EventBus,
  type MaintenanceWatcher,
  type RunningModule,
  type RunningModules,
  type ServiceClients,
} from '@platform/runtime';
import type { PlatformContext } from '../context';

/**
 * The HTTP edge. It depends on every service, so it is ready only when each answers its gRPC health check.
 */
export async function gatewayModule(ctx: PlatformContext, running: RunningModules): Promise<RunningModule> {
  const clients = running.get<ServiceClients>('clients');
  const cache = running.get<Cache>('cache');
  for (const name of SERVICE_NAMES) {
    ctx.readiness.push({
      name: `service:${name}`,
      async check() {
        const healthy = await checkHealth(clients.addressOf(name), clients.healthName(name), 1_000);
        if (!healthy) throw new Error(`${name} is not serving`);
      },
    });
  }
  const env = ctx.config.env;
  const app = createEdge(
    {
      clients,
      cache,
      bus: running.get<EventBus>('bus'),
      rateLimiter: createRateLimiter(cache),
      maintenance: running.get<MaintenanceWatcher>('maintenance'),
      logger: ctx.logger.child({ module: 'gateway' }),
      settings: {
        appUrl: env.APP_URL,
        instanceName: env.INSTANCE_NAME,
        sessionTtlSeconds: env.SESSION_TTL,
        apiKeyRateLimitPerMinute: env.API_KEY_RATE_LIMIT_PER_MINUTE,
        authCacheSeconds: env.AUTH_CACHE_SECONDS,
      },
    },
    {
      bodyLimitBytes: env.BODY_LIMIT_BYTES,
      readiness: () => runReadinessChecks(ctx.readiness, 2_000),
      ...(env.TRUST_PROXY !== undefined ? { trustProxy: env.TRUST_PROXY } : {}),
    },
  );
  return { value: app };
}
