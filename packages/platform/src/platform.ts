import { createLogger, loadConfig, resolveStartOrder, startModules, type Logger } from '@platform/runtime';
import type { PlatformContext } from './context';
import { MODULES } from './modules';
import { parseTargets } from './targets';

export interface RunningPlatform {
  context: PlatformContext;
  /** Port the HTTP listener bound (useful with PORT=0). */
  httpPort: number;
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
    shutdownGraceMs: config.env.SHUTDOWN_TIMEOUT_SECONDS * 1000,
  };
  const order = resolveStartOrder(MODULES, modules);
  logger.info({ targets, modules: order, storage: config.storage.kind, cache: config.cache.kind, bus: config.bus.kind }, 'starting');
  const { running, stop } = await startModules(MODULES, order, context, logger);
  const http = running.get<{ port: number }>('http');
  logger.info({ targets, port: http.port }, 'ready to serve');
  return { context, httpPort: http.port, grpcAddress: context.localGrpcAddress, stop };
}
