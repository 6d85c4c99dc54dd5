import { AppError } from '../errors/app-error';

/** Thrown by a cache used after `close()`: a bug in shutdown ordering, not a transient failure. */
export class CacheClosedError extends Error {
  constructor() {
    super('The cache is closed');
    this.name = 'CacheClosedError';
  }
}

/** Thrown when a value that is not an integer counter is incremented (Redis refuses it the same way). */
export class CacheValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CacheValueError';
  }
}

/**
 * Thrown when Redis has not answered a command in time (the connection is stuck or Redis is overloaded). An AppError
 * `unavailable`, as CacheUnavailableError: a cache failure nobody handles answers 503, never 500.
 */
export class CacheTimeoutError extends AppError {
  constructor(readonly timeoutMs: number) {
    super('unavailable', 'Service unavailable; try again shortly');
    this.name = 'CacheTimeoutError';
  }
}

/**
 * Thrown at once by a command while the connection to Redis is lost (it is reconnecting). Nothing in the cache is the
 * truth, so its users fall back or give up at once rather than wait the command timeout on every request
 * (docs/architecture.md, When a dependency fails). An AppError `unavailable` (503).
 */
export class CacheUnavailableError extends AppError {
  constructor() {
    super('unavailable', 'Service unavailable; try again shortly');
    this.name = 'CacheUnavailableError';
  }
}
