import type { Logger } from '../logging';
import { runReadinessChecks, type ReadinessCheck } from '../http/readiness';

export interface ReadinessHealthOptions {
  /** The gRPC server whose services (and overall status) follow the checks. */
  server: { setAllServing(serving: boolean): void };
  /** The process's readiness checks, read at each round (informational ones are skipped). */
  checks: () => readonly ReadinessCheck[];
  /** Time between rounds; 5 s by default. */
  intervalMs?: number;
  /** Bound of each check, as /readyz bounds them; 2 s by default. */
  timeoutMs?: number;
  logger: Logger;
}

export interface ReadinessHealth {
  /** Runs one round now (after the one in progress, if any); resolves to whether every check passed. */
  checkNow(): Promise<boolean>;
  /** Stops the rounds; a round in progress no longer changes the status. */
  stop(): Promise<void>;
}

/**
 * Makes grpc.health.v1 say what /readyz says. Kubernetes probes service pods with gRPC health, which the server
 * reports SERVING from registration until its stop; this runs the process's readiness checks (database, cache, bus)
 * every `intervalMs` and sets every service of the server, and the overall server, NOT_SERVING while one fails and
 * SERVING again once all pass. The first round runs at once. Changes are logged, not every round.
 */
export function followReadiness(options: ReadinessHealthOptions): ReadinessHealth {
  const intervalMs = options.intervalMs ?? 5_000;
  const timeoutMs = options.timeoutMs ?? 2_000;
  let serving = true;
  let stopped = false;
  let round: Promise<boolean> | undefined;

  const runRound = async (): Promise<boolean> => {
    const checks = options.checks().filter((check) => !check.informational);
    const report = await runReadinessChecks(checks, timeoutMs);
    const ok = report.status === 'ok';
    if (stopped || ok === serving) return ok;
    serving = ok;
    options.server.setAllServing(ok);
    if (ok) options.logger.info('dependencies answer again: gRPC health is SERVING');
    else {
      const failing = Object.entries(report.checks).filter(([, result]) => !result.ok).map(([name, result]) => `${name} (${result.error})`);
      options.logger.warn({ failing }, 'a dependency fails: gRPC health is NOT_SERVING until it answers');
    }
    return ok;
  };

  const checkNow = (): Promise<boolean> => {
    const previous = round ?? Promise.resolve(true);
    const next = previous.then(runRound, runRound);
    round = next;
    void next.finally(() => {
      if (round === next) round = undefined;
    });
    return next;
  };

  const tick = () => {
    // Rounds never overlap: a round still running (each check is bounded by the timeout) skips this tick.
    if (!round && !stopped) void checkNow().catch((error: unknown) => options.logger.error({ err: error }, 'readiness round failed'));
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  tick();

  return {
    checkNow,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await round?.catch(() => undefined);
    },
  };
}
