import { claimedRounds, type ClaimedRoundsTask } from '@platform/runtime';
import { claimDueHealthChecks } from '../store/health-store';
import { checkServerHealth, type HealthDeps } from './health';

/** Servers checked at once by one replica. */
const CONCURRENCY = 4;

/** Rounds start at least this often, so a server falls due at most this late (the interval itself may be longer). */
export const MAX_POLL_SECONDS = 5;

/**
 * The periodic health checker: every enabled server is checked once per `MCP_HEALTH_CHECK_SECONDS` (claimed with
 * SKIP LOCKED, so replicas split the work and never check one server twice in a round). 0 turns it off.
 */
export function healthChecker(deps: HealthDeps): ClaimedRoundsTask | null {
  const intervalSeconds = deps.config.env.MCP_HEALTH_CHECK_SECONDS;
  if (intervalSeconds === 0) return null;
  return claimedRounds({
    name: 'catalog.health-checker',
    logger: deps.logger,
    pollMs: Math.min(intervalSeconds, MAX_POLL_SECONDS) * 1000,
    concurrency: CONCURRENCY,
    claim: async () => (await claimDueHealthChecks(deps.db, 1, intervalSeconds))[0] ?? null,
    work: (server, signal) => checkServerHealth(deps, server, signal),
  });
}
