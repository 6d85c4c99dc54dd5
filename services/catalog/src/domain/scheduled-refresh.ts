import { AppError, claimedRounds, DatabaseUnavailableError, systemRequestContext, type ClaimedRoundsTask } from '@platform/runtime';
import type { CatalogDeps } from '../deps';
import { claimDueRefreshes } from '../store/refresh-store';
import { refreshMcpServer } from './capabilities';
import { MAX_POLL_SECONDS } from './health-checker';

/** Who a scheduled refresh is, in its audit entry: the system, by way of the scheduler. */
const SCHEDULER_CONTEXT = systemRequestContext('system', 'scheduled-refresh');

/** Servers re-discovered at once by one replica. */
const CONCURRENCY = 2;

/**
 * Scheduled re-discovery: every enabled server is refreshed once per `MCP_REFRESH_SECONDS` with the same domain
 * function as the refresh route, audited as the system. A new server is first due one interval after the scheduler
 * sees it. 0 turns it off.
 *
 * The catalog's own database failing (DatabaseUnavailableError) is not the upstream's: nothing is recorded on the
 * server (it could not be anyway), and the outage goes to claimedRounds, which logs it now and then and tries again
 * next round; a server claimed before it failed is due again one interval later.
 */
export function scheduledRefresh(deps: CatalogDeps): ClaimedRoundsTask | null {
  const intervalSeconds = deps.config.env.MCP_REFRESH_SECONDS;
  if (intervalSeconds === 0) return null;
  return claimedRounds({
    name: 'catalog.scheduled-refresh',
    logger: deps.logger,
    pollMs: Math.min(intervalSeconds, MAX_POLL_SECONDS) * 1000,
    concurrency: CONCURRENCY,
    claim: async () => (await claimDueRefreshes(deps.db, 1, intervalSeconds))[0] ?? null,
    async work(server, signal) {
      try {
        await refreshMcpServer(
          deps,
          { context: SCHEDULER_CONTEXT, teamId: server.team_id, serverId: server.id },
          signal,
        );
      } catch (error) {
        // Before the upstream check below: the database's failure is an `unavailable` AppError too.
        if (error instanceof DatabaseUnavailableError) throw error;
        // An unreachable upstream is already recorded on the server and audited; health checks report it.
        if (!(error instanceof AppError && error.code === 'unavailable')) throw error;
      }
    },
  });
}
