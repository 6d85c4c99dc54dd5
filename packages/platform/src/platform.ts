import { createLogger, loadConfig, resolveStartOrder, startModules, type Logger } from '@platform/runtime';
import type { PlatformContext } from './context';
import { MODULES } from './modules';
import type { HttpListeners } from './modules/http';
import { parseTargets } from './targets';

export interface RunningPlatform {
  context: PlatformContext;
  /** Port the edge's public listener bound (useful with PORT=0); undefined when this process runs no edge. */
  httpPort: number | undefined;
  /** Port the ops listener bound (/healthz, /readyz, /metrics; useful with OPS_PORT=0). */
  opsPort: number;
  /** Address of this process's gRPC server, when it hosts services. */
  grpcAddress: string | undefined;
  stop(): Promise<void>;
}

/**
 * Starts the modules of the given targets. Used by the executable and by integration tests, which run the
 * real platform in-process on ephemeral ports.
 */
export async function startPlatform(options: { target?: string; env?: NodeJS.ProcessEnv; logger?: Logger } = {}): Promise<RunningPlatform> {
  const env = options.env ?? process.env;
  const { targets, modules } = parseTargets(options.target);
  const config = loadConfig(env, { embeddedAllowed: targets.length === 1 && targets[0] === 'all' });
  const logger = options.logger ?? createLogger({ level: config.env.LOG_LEVEL });
  const context: PlatformContext = {
    config,
    logger,
    targets,
    readiness: [],
    shutdownGraceMs: drainGraceMs(config.env.SHUTDOWN_TIMEOUT_SECONDS),
  };
  const order = resolveStartOrder(MODULES, modules);
  logger.info({ targets, modules: order, storage: config.storage.kind, cache: config.cache.kind, bus: config.bus.kind }, 'starting');
  const { running, stop } = await startModules(MODULES, order, context, logger);
  const http = running.get<HttpListeners>('http');
  logger.info({ targets, port: http.port, opsPort: http.opsPort }, 'ready to serve');
  return { context, httpPort: http.port, opsPort: http.opsPort, grpcAddress: context.localGrpcAddress, stop };
}

/**
 * The shutdown budget, SHUTDOWN_TIMEOUT_SECONDS, split between the stop's phases (docs/architecture.md, Stopping):
 * each listener's drain (the edge's HTTP listener, then the gRPC server) may take at most 40 % of it, so after both
 * at least a fifth is left for what follows them (the call-record flush, relays, consumers, closing the ports); the
 * executable exits at the budget plus 5 s whatever is still running (main.ts).
 */
export function drainGraceMs(shutdownTimeoutSeconds: number): number {
  return Math.round(shutdownTimeoutSeconds * 1000 * 0.4);
}
