import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpsApp, runReadinessChecks, type RunningModule, type RunningModules } from '@platform/runtime';
import type { PlatformContext } from '../context';

/**
 * The process's one HTTP listener on PORT: the edge when this process runs the gateway, otherwise just
 * /healthz, /readyz and /metrics. Stopping stops accepting, lets in-flight requests finish, then closes.
 */
export async function httpModule(ctx: PlatformContext, running: RunningModules): Promise<RunningModule> {
  const app: RequestListener = running.has('gateway')
    ? running.get<RequestListener>('gateway')
    : createOpsApp({ readiness: () => runReadinessChecks(ctx.readiness, 2_000) });
  const server = createServer({ requestTimeout: 120_000, keepAliveTimeout: 65_000 }, app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(ctx.config.env.PORT, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  ctx.logger.info({ port, url: ctx.config.env.APP_URL }, 'HTTP listening');
  return { value: { port, server }, stop: () => closeGracefully(server, ctx.shutdownGraceMs) };
}

function closeGracefully(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    // Idle keep-alive connections would otherwise hold close() open until they time out.
    server.closeIdleConnections();
  });
}
