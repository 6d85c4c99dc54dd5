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

/** Thrown when Redis has not answered a command in time (the connection is stuck or Redis is overloaded). */
export class CacheTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`The cache did not answer within ${timeoutMs} ms`);
    this.name = 'CacheTimeoutError';
  }
}
