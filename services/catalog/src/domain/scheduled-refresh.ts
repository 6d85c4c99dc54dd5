import { AppError, claimedRounds, systemRequestContext, type ClaimedRoundsTask } from '@platform/runtime';
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
        // An unreachable upstream is already recorded on the server and audited; health checks report it.
        if (!(error instanceof AppError && error.code === 'unavailable')) throw error;
      }
    },
  });
}
