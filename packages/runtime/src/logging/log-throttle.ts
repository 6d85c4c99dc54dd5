import type { Logger } from './logger';

/**
 * Lets a log line that may repeat on every request (a dependency down) through at most once per `intervalMs`, and
 * counts the ones held back so the next line can say how many: an outage logged once per request would drown the log
 * it is meant to be found in, and cost each request a line's serialising.
 */
export class LogThrottle {
  private lastAt = Number.NEGATIVE_INFINITY;
  private held = 0;

  constructor(private readonly intervalMs: number) {}

  /** Undefined while held back; otherwise how many lines were held back since the last one let through. */
  pass(now = Date.now()): number | undefined {
    if (now - this.lastAt < this.intervalMs) {
      this.held += 1;
      return undefined;
    }
    this.lastAt = now;
    const held = this.held;
    this.held = 0;
    return held;
  }

  /** A warning through `logger` when it may pass, naming how many were held back (`suppressed`). */
  warn(logger: Logger, fields: Record<string, unknown>, message: string): void {
    const suppressed = this.pass();
    if (suppressed !== undefined) logger.warn({ ...fields, suppressed }, message);
  }
}
