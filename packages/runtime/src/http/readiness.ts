import type { Logger } from '../logging';

/** One dependency the process needs before it can serve (database, cache, bus, ...). */
export interface ReadinessCheck {
  name: string;
  /** Resolves when the dependency answers; rejects (with anything) when it does not. */
  check(): Promise<void>;
}

export interface ReadinessCheckResult {
  ok: boolean;
  /** A short generic text; never a URL, host name or credential. */
  error?: string;
}

export interface ReadinessReport {
  status: 'ok' | 'unavailable';
  checks: Record<string, ReadinessCheckResult>;
}

class ReadinessTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms`);
  }
}

function withTimeout(promise: Promise<void>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ReadinessTimeout(timeoutMs)), timeoutMs);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Runs every check concurrently, each bounded by `timeoutMs`. The report only says which check failed and
 * whether it timed out: driver errors can carry host names or connection strings, so their detail goes to the
 * log (when a logger is given) and never into the response.
 */
export async function runReadinessChecks(
  checks: readonly ReadinessCheck[],
  timeoutMs: number,
  logger?: Logger,
): Promise<ReadinessReport> {
  const results = await Promise.all(
    checks.map(async (check): Promise<[string, ReadinessCheckResult]> => {
      try {
        // Wrapped so a check that throws synchronously is reported like one that rejects.
        await withTimeout(Promise.resolve().then(() => check.check()), timeoutMs);
        return [check.name, { ok: true }];
      } catch (error) {
        const timedOut = error instanceof ReadinessTimeout;
        logger?.warn(
          { check: check.name, reason: timedOut ? 'timeout' : error instanceof Error ? error.name : 'error' },
          'readiness check failed',
        );
        return [check.name, { ok: false, error: timedOut ? 'timed out' : 'unavailable' }];
      }
    }),
  );
  const report: ReadinessReport = { status: 'ok', checks: {} };
  for (const [name, result] of results) {
    report.checks[name] = result;
    if (!result.ok) report.status = 'unavailable';
  }
  return report;
}
