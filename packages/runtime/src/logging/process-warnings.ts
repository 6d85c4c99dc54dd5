import type { Logger } from './logger';

/**
 * Node's process warnings (deprecations, listener-leak guesses, experimental features) become lines of the platform's
 * structured log at warn, instead of the plain text Node writes to standard error by default, which log pipelines
 * that parse JSON lines cannot read. Replaces Node's own printer.
 */
export function logProcessWarnings(logger: Logger): void {
  process.removeAllListeners('warning');
  process.on('warning', (warning: Error & { code?: string }) => {
    logger.warn({ warning: { name: warning.name, message: warning.message, ...(warning.code ? { code: warning.code } : {}) } }, 'Node.js process warning');
  });
}
