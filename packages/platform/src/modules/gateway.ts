import { createEdge, stopEdge } from '@platform/gateway';
import {
  checkHealth,
  createRateLimiter,
  SERVICE_NAMES,
  type Cache,
  type EventBus,
  type Secrets,
  type MaintenanceWatcher,
  type RunningModule,
  type RunningModules,
  type ServiceClients,
} from '@platform/runtime';
import type { PlatformContext } from '../context';

/**
 * The HTTP edge. Its readiness is what it needs itself, never the services behind it: each service has its own
 * readiness (its gRPC health), and one of them down (a notifications pod draining, say) must not take every edge out
 * of its Service. Each service's gRPC health is still checked on /readyz, reported under `dependencies`. In a
 * process that runs only the edge, every other check is informational too: the edge needs no backing service to
 * serve (the cache and the bus are never required; the database the module graph opens is not the edge's).
 */
export async function gatewayModule(ctx: PlatformContext, running: RunningModules): Promise<RunningModule> {
  const clients = running.get<ServiceClients>('clients');
  const cache = running.get<Cache>('cache');
  if (!ctx.localGrpcServer) {
    for (const check of ctx.readiness) check.informational = true;
  }
  for (const name of SERVICE_NAMES) {
    ctx.readiness.push({
      name: `service:${name}`,
      informational: true,
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
      secrets: running.get<Secrets>('secrets'),
      rateLimiter: createRateLimiter(cache),
      maintenance: running.get<MaintenanceWatcher>('maintenance'),
      logger: ctx.logger.child({ module: 'gateway' }),
      settings: {
        appUrl: env.APP_URL,
        instanceName: env.INSTANCE_NAME,
        sessionTtlSeconds: env.SESSION_TTL,
        apiKeyRateLimitPerMinute: env.API_KEY_RATE_LIMIT_PER_MINUTE,
        authCacheSeconds: env.AUTH_CACHE_SECONDS,
        identityKeysCacheSeconds: env.IDENTITY_KEYS_CACHE_SECONDS,
        mcp: {
          allowedOrigins: env.MCP_ALLOWED_ORIGINS,
          sessionMaxAgeSeconds: env.MCP_SESSION_MAX_AGE_SECONDS,
          maxMessageBytes: env.MCP_MAX_MESSAGE_BYTES,
          maxExchangeSeconds: env.MCP_MAX_EXCHANGE_SECONDS,
          maxRequestsPerPerson: env.MCP_MAX_REQUESTS_PER_PERSON,
          maxGetStreamsPerPerson: env.MCP_MAX_GET_STREAMS_PER_PERSON,
          allowedInternalNetworks: env.ALLOWED_INTERNAL_NETWORKS,
        },
        defaultPublishPolicy: env.MCP_PUBLISH_POLICY,
      },
    },
    {
      bodyLimitBytes: env.BODY_LIMIT_BYTES,
      checkResponses: env.CHECK_RESPONSES,
      ...(env.TRUST_PROXY !== undefined ? { trustProxy: env.TRUST_PROXY } : {}),
    },
  );
  // The HTTP listener stops first (it starts after this module): it has ended the /mcp GET streams (drainEdge) and
  // in-flight requests have finished; the bus stops after (it is a dependency), so the data plane's closing flush of
  // call records can still publish.
  return { value: app, stop: () => stopEdge(app) };
}
