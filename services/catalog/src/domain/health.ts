import { performance } from 'node:perf_hooks';
import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CatalogDeps } from '../deps';
import { writeHealthEvent } from '../events/health-events';
import { recordHealth, type HealthOutcome } from '../store/health-store';
import type { McpServerRow } from '../store/mcp-servers-mappers';
import { classify } from './discovery';
import { raced } from './upstream-client';
import { upstreamExchange, upstreamTargetOf, type DiscoveryTarget } from './upstream-exchange';

export type HealthDeps = Pick<CatalogDeps, 'db' | 'logger' | 'config' | 'secrets'>;

/** Whether the upstream answered 401 or 403: its credential is missing or refused (someone must sign in). */
function refusedCredentials(error: unknown): number | null {
  for (let current: unknown = error, depth = 0; current && depth < 6; current = (current as { cause?: unknown }).cause, depth++) {
    if ((current instanceof StreamableHTTPError || current instanceof SseError) && (current.code === 401 || current.code === 403)) return current.code;
  }
  return null;
}

/**
 * One health check: connect with the SDK client (initialize) and `ping`, all within the server's timeout, through
 * the address guard with the server's static headers. Latency is the ping's round trip. The whole exchange is
 * raced against the timeout (the SDK leaves steps of `connect` without one) and the client then closed, so a check
 * ends in time whatever the upstream does; it reads at most MAX_HANDSHAKE_BYTES, each message at most
 * MAX_VALIDATED_VALUES values (`protocol_error` past either). The message is the platform's own words (the class,
 * or the refused HTTP status): never the upstream's text or a header value. Resolves null when `signal` stopped it
 * (shutdown): then nothing was learnt.
 */
export async function probeUpstream(target: DiscoveryTarget, signal: AbortSignal): Promise<HealthOutcome | null> {
  const deadline = AbortSignal.timeout(target.timeoutSeconds * 1000);
  const exchange = upstreamExchange(target, 'platform-catalog-health', [signal, deadline]);
  const { guarded, bounded, client, stop, options } = exchange;
  const check = async () => {
    await client.connect(bounded.transport, options);
    const started = performance.now();
    await client.ping(options);
    return Math.round(performance.now() - started);
  };
  try {
    const latencyMs = await raced(check(), stop);
    return { status: 'healthy', latencyMs, errorClass: null, signInRequired: false, message: null };
  } catch (error) {
    if (signal.aborted) return null;
    const refused = refusedCredentials(error);
    const errorClass = deadline.aborted ? 'timeout' : guarded.overflowed.aborted || bounded.refused.aborted ? 'protocol_error' : classify(error);
    const message = refused ? `The MCP server refused the credentials (HTTP ${refused})` : `The MCP server could not be reached: ${errorClass}`;
    return { status: 'unhealthy', latencyMs: null, errorClass, signInRequired: refused !== null, message };
  } finally {
    await exchange.close();
  }
}

/**
 * Checks one server and stores the outcome. An unhealthy outcome writes `server.unhealthy` unless that is what the
 * last event said, a healthy one `server.healthy` when the last event was `server.unhealthy` (even if a change of
 * connection reset the status to unknown meanwhile), each in the transaction of the change. A check over a
 * connection (URL, transport, headers) the server left while it ran writes nothing.
 */
export async function checkServerHealth(deps: HealthDeps, server: McpServerRow, signal: AbortSignal): Promise<void> {
  const outcome = await probeUpstream(upstreamTargetOf(deps, server), signal);
  if (!outcome) return;
  await deps.db.transaction(async (tx) => {
    // Stored only while the server still connects as probed (a change of URL, transport or headers meanwhile wins).
    const health = await recordHealth(tx, server.id, server, outcome);
    if (!health) return;
    // Events follow what was announced, not the stored status: a change of connection resets that to unknown
    // without an event, and a server announced down must still be announced back up.
    if (health.status === 'unhealthy' && !health.downAnnounced) await writeHealthEvent(tx, 'server.unhealthy', server.id, health, outcome.errorClass);
    else if (health.status === 'healthy' && health.downAnnounced) await writeHealthEvent(tx, 'server.healthy', server.id, health, null);
  });
  if (outcome.status === 'unhealthy') deps.logger.debug({ serverId: server.id, errorClass: outcome.errorClass }, 'MCP server health check failed');
}
