import type { Logger } from '../logging';

/**
 * Calls `stop` once on SIGTERM or SIGINT, then exits. A second signal, or `timeoutMs` passing, exits at once:
 * Kubernetes sends SIGKILL after its grace period anyway, and a stuck drain must not hang a laptop.
 */
export function onShutdownSignal(stop: () => Promise<void>, options: { logger: Logger; timeoutMs: number }): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) {
      options.logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    options.logger.info({ signal }, 'shutting down: draining in-flight work');
    const timer = setTimeout(() => {
      options.logger.error({ timeoutMs: options.timeoutMs }, 'shutdown timed out: exiting');
      process.exit(1);
    }, options.timeoutMs);
    timer.unref();
    stop().then(
      () => {
        options.logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        options.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
}
