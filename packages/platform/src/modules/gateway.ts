import { createEdgeApp } from '@platform/gateway';
import { checkHealth, runReadinessChecks, SERVICE_NAMES, type RunningModule, type RunningModules, type ServiceClients } from '@platform/runtime';
import type { PlatformContext } from '../context';

/**
 * The HTTP edge. It depends on every service, so it is ready only when each answers its gRPC health check.
 */
export async function gatewayModule(ctx: PlatformContext, running: RunningModules): Promise<RunningModule> {
  const clients = running.get<ServiceClients>('clients');
  for (const name of SERVICE_NAMES) {
    ctx.readiness.push({
      name: `service:${name}`,
      async check() {
        const healthy = await checkHealth(clients.addressOf(name), clients.healthName(name), 1_000);
        if (!healthy) throw new Error(`${name} is not serving`);
      },
    });
  }
  const app = createEdgeApp({
    config: { appUrl: ctx.config.env.APP_URL, bodyLimitBytes: ctx.config.env.BODY_LIMIT_BYTES, instanceName: ctx.config.env.INSTANCE_NAME },
    logger: ctx.logger.child({ module: 'gateway' }),
    readiness: () => runReadinessChecks(ctx.readiness, 2_000),
    routes: [],
  });
  return { value: app };
}
