import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { drainEdge } from '@platform/gateway';
import {
  ConfigError,
  followReadiness,
  gracefulClose,
  runReadinessChecks,
  startOpsServer,
  type ReadinessHealth,
  type RunningModule,
  type RunningModules,
} from '@platform/runtime';
import type { PlatformContext } from '../context';
import { portInUseAsConfigError } from './port-in-use';

/** What the HTTP module holds: the edge's public port (when this process runs the edge) and the ops port. */
export interface HttpListeners {
  /** The public listener on PORT, serving the edge; absent in a process without the gateway. */
  port: number | undefined;
  /** The ops listener on OPS_PORT: /healthz, /readyz, /metrics. */
  opsPort: number;
}

/** Each readiness check's bound, on /readyz and in the gRPC health rounds. */
const READINESS_TIMEOUT_MS = 2_000;
/** How often the gRPC health of the services hosted here follows the readiness checks. */
const HEALTH_INTERVAL_MS = 5_000;
/** A probe or scrape in flight when the ops listener closes. */
const OPS_CLOSE_GRACE_MS = 1_000;

/**
 * The process's HTTP side (docs/architecture.md, Health, readiness and ops):
 *
 * - the ops listener on OPS_PORT, in every process: /healthz, /readyz (the checks its modules added; informational
 *   ones listed apart), /metrics. Never routed by the Ingress.
 * - the public listener on PORT, only where the gateway runs: the edge (which answers /healthz too, and nothing else
 *   of the ops endpoints).
 * - where this process hosts services, their grpc.health.v1 status follows the same readiness checks.
 *
 * Stopping: the gRPC health rounds stop; the edge's listener stops accepting, ends its /mcp GET streams at once
 * (`drainEdge`) and lets the requests in flight finish within the drain grace, then cuts what is left; the ops
 * listener closes last, so probes are answered while the edge drains.
 */
export async function httpModule(ctx: PlatformContext, running: RunningModules): Promise<RunningModule> {
  const env = ctx.config.env;
  const edgeApp = running.has('gateway') ? running.get<RequestListener>('gateway') : undefined;
  if (edgeApp && env.OPS_PORT !== 0 && env.OPS_PORT === env.PORT) {
    throw new ConfigError([`OPS_PORT: must differ from PORT (${env.PORT}): the ops endpoints are not served on the public port`]);
  }
  // This process's own gRPC listener (started before this module) holds GRPC_PORT: not "another program".
  const grpcPort = ctx.localGrpcServer ? ctx.config.grpc.port : 0;
  const ownPorts: [string, number][] = [['OPS_PORT', env.OPS_PORT], ...(edgeApp ? [['PORT', env.PORT] as [string, number]] : [])];
  for (const [variable, port] of ownPorts) {
    if (port !== 0 && port === grpcPort) throw new ConfigError([`${variable}: must differ from GRPC_PORT (${grpcPort}), on which this process serves gRPC`]);
  }
  const ops = await startOpsServer({
    port: env.OPS_PORT,
    // Each failing check is logged with its reason's class: the answer says only which failed (docs/operations.md).
    readiness: () => runReadinessChecks(ctx.readiness, READINESS_TIMEOUT_MS, ctx.logger),
    logger: ctx.logger,
  }).catch((error: unknown) => {
    throw portInUseAsConfigError(error, 'OPS_PORT', env.OPS_PORT);
  });

  let edge: { port: number; close: (graceMs: number) => Promise<void> } | undefined;
  if (edgeApp) {
    try {
      edge = await listenPublic(edgeApp, env.PORT);
    } catch (error) {
      await ops.close(0);
      throw portInUseAsConfigError(error, 'PORT', env.PORT);
    }
    ctx.logger.info({ port: edge.port, url: env.APP_URL }, 'HTTP listening');
  }

  let health: ReadinessHealth | undefined;
  if (ctx.localGrpcServer) {
    health = followReadiness({
      server: ctx.localGrpcServer,
      checks: () => ctx.readiness,
      intervalMs: HEALTH_INTERVAL_MS,
      timeoutMs: READINESS_TIMEOUT_MS,
      logger: ctx.logger.child({ module: 'grpc-health' }),
    });
  }

  const listeners: HttpListeners = { port: edge?.port, opsPort: ops.port };
  return {
    value: listeners,
    async stop() {
      await health?.stop();
      if (edge && edgeApp) {
        const closed = edge.close(ctx.shutdownGraceMs);
        drainEdge(edgeApp);
        await closed;
      }
      await ops.close(OPS_CLOSE_GRACE_MS);
    },
  };
}

async function listenPublic(app: RequestListener, port: number): Promise<{ port: number; close: (graceMs: number) => Promise<void> }> {
  const server = createServer({ requestTimeout: 120_000, keepAliveTimeout: 65_000 }, app);
  const close = gracefulClose(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { port: (server.address() as AddressInfo).port, close };
}
