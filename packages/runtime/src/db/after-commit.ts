import type { Logger } from '../logging/logger';

/**
 * Runs a committed transaction's callbacks. The commit already happened, so a failing callback is logged and
 * never turned into a transaction error.
 */
export function runAfterCommit(callbacks: ReadonlyArray<() => void>, logger: Logger): void {
  for (const callback of callbacks) {
    try {
      callback();
    } catch (error) {
      logger.error({ err: error }, 'afterCommit callback failed');
    }
  }
}
