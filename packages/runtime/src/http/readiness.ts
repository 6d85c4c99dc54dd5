import { withTimeout } from '../lifecycle/timeout';
import type { Logger } from '../logging';

/** One dependency the process needs before it can serve (database, cache, bus, ...). */
export interface ReadinessCheck {
  name: string;
  /** Resolves when the dependency answers; rejects (with anything) when it does not. */
  check(): Promise<void>;
  /**
   * Reported (under `dependencies`) but never a reason to be unready: something this process calls but does not
   * need in order to serve, such as the services behind the edge, each of which has readiness of its own.
   */
  informational?: boolean;
}

export interface ReadinessCheckResult {
  ok: boolean;
  /** A short generic text; never a URL, host name or credential. */
  error?: string;
}

export interface ReadinessReport {
  /** `ok` when every check in `checks` passed. */
  status: 'ok' | 'unavailable';
  /** What readiness requires. */
  checks: Record<string, ReadinessCheckResult>;
  /** The informational checks, when there are any: shown, never counted. */
  dependencies?: Record<string, ReadinessCheckResult>;
}

class ReadinessTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms`);
  }
}


/**
 * Runs every check concurrently, each bounded by `timeoutMs`; informational checks are reported apart and do not
 * change the status. The report only says which check failed and whether it timed out: driver errors can carry host names or connection strings, so their detail goes to the
 * log (when a logger is given) and never into the response.
 */
export async function runReadinessChecks(
  checks: readonly ReadinessCheck[],
  timeoutMs: number,
  logger?: Logger,
): Promise<ReadinessReport> {
  const results = await Promise.all(
    checks.map(async (check): Promise<[ReadinessCheck, ReadinessCheckResult]> => {
      try {
        // Wrapped so a check that throws synchronously is reported like one that rejects.
        await withTimeout(Promise.resolve().then(() => check.check()), timeoutMs, () => new ReadinessTimeout(timeoutMs));
        return [check, { ok: true }];
      } catch (error) {
        const timedOut = error instanceof ReadinessTimeout;
        logger?.warn(
          { check: check.name, reason: timedOut ? 'timeout' : error instanceof Error ? error.name : 'error' },
          'readiness check failed',
        );
        return [check, { ok: false, error: timedOut ? 'timed out' : 'unavailable' }];
      }
    }),
  );
  const report: ReadinessReport = { status: 'ok', checks: {} };
  for (const [check, result] of results) {
    if (check.informational) {
      (report.dependencies ??= {})[check.name] = result;
      continue;
    }
    report.checks[check.name] = result;
    if (!result.ok) report.status = 'unavailable';
  }
  return report;
}
