import { setMaxListeners } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RuntimeServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { authGenerationOf, firstAbortOf } from '@platform/runtime';
import type { McpPrincipal } from '../oauth/resource-server';
import { ClientReply } from './client-reply';
import { endpointFor, type CallContext, type DataPlane } from './data-plane';
import { toClient } from './forward';
import { claimGetStream } from './get-streams';
import { McpHttpError } from './http-errors';
import { RPC, type JsonRpcMessage } from './jsonrpc';
import { requireSession } from './session-check';
import { pauseUnlessStopped } from './stop-switch';
import { streamUpstreamsChanged } from './stream-upstreams';
import { endUpstreamSession, openUpstreamStream, type UpstreamEndpoint } from './upstream-client';
import type { UpstreamStreamItem } from './upstream-items';
import { currentUpstreamSession } from './upstream-sessions';

const KEEP_ALIVE_MS = 25_000;
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 30_000;
const LIST_CHANGES: JsonRpcMessage[] = [
  { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
  { jsonrpc: '2.0', method: 'notifications/prompts/list_changed' },
  { jsonrpc: '2.0', method: 'notifications/resources/list_changed' },
];

/**
 * GET /mcp/{slug}: the client's stream of server-initiated messages, one per session on this replica (409 for a
 * second, get-streams.ts). The gateway merges the GET streams of every upstream (their notifications, and their
 * questions with relay ids), reconnecting to an upstream whose stream drops, and adds its own list-changed
 * notifications when the catalog changes what the gateway exposes. The gateway ends the stream (cleanly: the client
 * opens it again) when the session ends or the upstreams it relays change. Everything it starts stops when it ends.
 */
export async function handleGet(plane: DataPlane, req: IncomingMessage, res: ServerResponse, principal: McpPrincipal, readAt: number, recheck: AccessCheck): Promise<void> {
  const accept = req.headers.accept ?? '';
  if (!accept.includes('text/event-stream')) throw new McpHttpError(406, RPC.invalidRequest, 'Not Acceptable: the client must accept text/event-stream');
  // Watched before the awaits below: a client leaving during them would close the response before a listener added
  // afterwards, which would then never run, and the stream's keep-alive, listener and upstream relays would live on.
  const closed = closeSignalOf(res);
  const { key, session } = await requireSession(plane, req, principal);
  const resolved = await plane.exposures.get(principal.gateway.slug, readAt);
  if (closed.aborted) return;
  // The edge is stopping: a stream opened now would be ended at once; the client opens it again on another replica.
  if (plane.draining.aborted) throw new McpHttpError(503, RPC.internalError, 'Service Unavailable: this gateway replica is shutting down; reconnect', { 'retry-after': '1' });
  const releaseStream = plane.perPerson.streams.claim(principal.personId);
  try {
    // Aborted when the gateway ends the stream: its session ended, the upstreams it relays changed, or access ended.
    const ended = new AbortController();
    claimGetStream(plane, key, closed, () => ended.abort());
    const stopWatching = endWhenAccessEnds(plane, principal, recheck, closed, () => ended.abort());
    try {
      await relayUntilClosed({ plane, principal, resolved, session, sessionKey: key }, new ClientReply(res), closed, ended);
    } finally {
      stopWatching();
    }
  } finally {
    releaseStream();
  }
}

/** Re-runs the request's token check; rejects once the caller may no longer use the gateway. */
export type AccessCheck = () => Promise<unknown>;

/**
 * A GET stream outlives the request that opened it, so what that request's token check decided is decided again
 * whenever the shared auth generation moves (a person removed or suspended, a gateway disabled, a token revoked:
 * every such change moves it), and the stream ends when the access token expires. The stream then ends as when the
 * gateway ends it for any other reason: its relays stop and nothing more is written, and the response is completed
 * (a disabled gateway also ends it through the catalog, and the two must not differ); the client reconnects with a
 * token that is still good, or is refused.
 */
function endWhenAccessEnds(plane: DataPlane, principal: McpPrincipal, recheck: AccessCheck, closed: AbortSignal, endStream: () => void): () => void {
  const end = () => {
    if (!closed.aborted) endStream();
  };
  const generation = authGenerationOf(plane.deps.cache);
  const check = () => {
    if (!closed.aborted) recheck().catch(end);
  };
  const stopHearing = generation.onAnnouncement(check);
  const stopResuming = generation.onResumed(check);
  const expiresInMs = principal.tokenExpiresAt ? Date.parse(principal.tokenExpiresAt) - Date.now() : NaN;
  // setTimeout holds at most 2^31 - 1 ms (about 24 days); a token living longer is checked when the stream reconnects.
  const expiry = expiresInMs >= 0 && expiresInMs < 2 ** 31 ? setTimeout(end, expiresInMs) : undefined;
  return () => {
    stopHearing();
    stopResuming();
    clearTimeout(expiry);
  };
}

/** Aborted when the client's connection closes; already aborted when it closed before this was called. */
export function closeSignalOf(res: ServerResponse): AbortSignal {
  const closed = new AbortController();
  // The relay of each of the gateway's upstreams listens to it, and a gateway may front more than Node's warning expects (10).
  setMaxListeners(Infinity, closed.signal);
  res.once('close', () => closed.abort());
  if (res.destroyed) closed.abort();
  return closed.signal;
}

/**
 * Streams the upstreams' messages and the gateway's notices to the client until it leaves, then stops them all. When
 * the edge begins draining, or the gateway ends the stream (`ended`), the stream is ended cleanly (the client may open
 * it again, elsewhere or over the current upstreams) and the relays stop at once, as when a client leaves.
 */
async function relayUntilClosed(ctx: CallContext, reply: ClientReply, closed: AbortSignal, ended: AbortController): Promise<void> {
  reply.startStream();
  const keepAlive = setInterval(() => reply.keepAlive(), KEEP_ALIVE_MS);
  // Not AbortSignal.any: `draining` lives as long as the edge; each stream's listener on it goes when the stream ends.
  const stop = firstAbortOf([closed, ctx.plane.draining, ended.signal]);
  const stopListening = ctx.plane.exposures.onChange(catalogWatcher(ctx, reply, stop.signal, () => ended.abort()));
  // Each relay ends by itself once the stream stops (or earlier, when its upstream offers no stream); the client's
  // stream stays open for the gateway's own notices whatever they do, and is not held up by their teardown.
  for (const server of ctx.resolved.exposure.runtime.servers) void pumpUpstream(ctx, server, reply, stop.signal);
  try {
    await abortOf(stop.signal);
  } finally {
    clearInterval(keepAlive);
    stopListening();
    stop.release();
    reply.end();
  }
}

/**
 * What the stream does when the catalog announces a change that may touch its gateway. Its relays were started over
 * the servers resolved when it opened, so the gateway is resolved again as a request would (every stream of the
 * gateway on this replica shares one lookup, exposures.ts); the client is told its lists may have changed, and the
 * stream is ended when its relays no longer match (stream-upstreams.ts: a server gone, disabled or added, its address,
 * transport, timeout, credential or identity setting changed, the gateway disabled or gone), so no message of an
 * upstream taken out of the gateway reaches the client, and no upstream is reached with a credential taken back. A
 * check that cannot be made (the catalog unreachable) ends the stream too: its relays can no longer be vouched for.
 * A change announced while a check runs is checked once more after it.
 */
function catalogWatcher(ctx: CallContext, reply: ClientReply, stopped: AbortSignal, end: () => void): (gatewayIds: string[]) => void {
  const { id: gatewayId, slug } = ctx.principal.gateway;
  let checking = false;
  let again = false;
  const check = async () => {
    checking = true;
    try {
      do {
        again = false;
        let changed: boolean;
        try {
          changed = streamUpstreamsChanged(ctx.resolved, await ctx.plane.exposures.get(slug));
        } catch (error) {
          ctx.plane.deps.logger.debug({ err: error, gatewayId }, 'a GET stream could not check its upstreams after a catalog change; ending it');
          changed = true;
        }
        if (stopped.aborted) return;
        for (const message of LIST_CHANGES) reply.send(message);
        if (changed) {
          end();
          return;
        }
      } while (again);
    } finally {
      checking = false;
    }
  };
  return (gatewayIds) => {
    if (stopped.aborted || (gatewayIds.length > 0 && !gatewayIds.includes(gatewayId))) return;
    if (checking) again = true;
    else void check();
  };
}

/** Resolves when `signal` aborts. */
function abortOf(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/**
 * Relays one upstream's GET stream until the client's stream stops (`closed`). A stream that drops or fails is
 * reopened, with backoff. An upstream that forgot the session (404: it restarted) gets a fresh one, opened as for a
 * POST and shared with the POSTs and the other replicas, and the stream is reopened in it at once. It ends for good when the upstream offers
 * no stream (405), or already has one for the session and allows one (409: another replica's relay, say): asking
 * again would not change that, so it is said once in the log.
 */
async function pumpUpstream(ctx: CallContext, server: RuntimeServer, reply: ClientReply, closed: AbortSignal): Promise<void> {
  const retry = new RetryPace();
  let stale: UpstreamEndpoint | undefined;
  while (!closed.aborted) {
    try {
      const endpoint = await endpointFor(ctx, server, stale);
      stale = undefined;
      const opened = await openUpstreamStream(endpoint, {
        dispatcher: ctx.plane.dispatcher,
        signal: closed,
        timeoutSeconds: server.timeoutSeconds,
        maxMessageBytes: ctx.plane.settings.maxMessageBytes,
      });
      if (opened.kind === 'no_stream') return;
      if (opened.kind === 'conflict') {
        ctx.plane.deps.logger.warn({ serverId: server.id }, 'an upstream refused a GET stream for the session (409: it already has one); its server-initiated messages do not reach this client stream');
        return;
      }
      if (opened.kind === 'session_expired') {
        stale = endpoint;
        if (retry.renewNow()) continue;
      } else {
        retry.opened();
        await relayItems(ctx, server, reply, opened.items, closed);
      }
    } catch (error) {
      if (closed.aborted) return;
      ctx.plane.deps.logger.debug({ err: error, serverId: server.id }, 'an upstream GET stream failed; reconnecting');
    }
    await retry.pause(closed);
  }
}

async function relayItems(ctx: CallContext, server: RuntimeServer, reply: ClientReply, items: AsyncIterable<UpstreamStreamItem>, closed: AbortSignal): Promise<void> {
  for await (const item of items) {
    if (!('message' in item)) continue;
    const relayed = toClient(ctx, server, item.message);
    if (!relayed) continue;
    reply.send(relayed);
    // A client that reads slowly holds this upstream's stream back rather than filling the edge's memory.
    const taken = reply.drained(closed);
    if (taken) await taken;
  }
}

/** When one upstream's relay tries again: backoff between failures, at once for a fresh session (once in a row). */
class RetryPace {
  private delayMs = RETRY_MIN_MS;
  private renewed = false;

  /** A stream opened: the next failure starts from the shortest wait. */
  opened(): void {
    this.delayMs = RETRY_MIN_MS;
    this.renewed = false;
  }

  /** True the first time in a row: a session the upstream refuses right after it was opened waits like any failure. */
  renewNow(): boolean {
    if (this.renewed) return false;
    this.renewed = true;
    return true;
  }

  /** Waits before the next attempt (less when the client leaves meanwhile), each time twice as long up to the maximum. */
  async pause(closed: AbortSignal): Promise<void> {
    const delayMs = this.delayMs;
    this.delayMs = Math.min(delayMs * 2, RETRY_MAX_MS);
    await pauseUnlessStopped(delayMs, closed);
  }
}

/** DELETE /mcp/{slug}: ends the session here and upstream; every replica refuses it from now on. */
export async function handleDelete(plane: DataPlane, req: IncomingMessage, res: ServerResponse, principal: McpPrincipal, readAt: number): Promise<void> {
  const { key, session } = await requireSession(plane, req, principal);
  const resolved = await plane.exposures.get(principal.gateway.slug, readAt);
  const ctx: CallContext = { plane, principal, resolved, session, sessionKey: key };
  await plane.liveness.end(key);
  await plane.legacy.closeSession(key);
  await Promise.allSettled(
    resolved.exposure.runtime.servers.map(async (server) => {
      // Only upstream sessions that exist are ended; none is opened to be closed.
      if (!currentUpstreamSession(plane.overrides, session, key, server)) return;
      const endpoint = await endpointFor(ctx, server);
      await endUpstreamSession(endpoint, { dispatcher: plane.dispatcher, timeoutSeconds: server.timeoutSeconds });
    }),
  );
  plane.overrides.forgetSession(key, resolved.exposure.runtime.servers.map((server) => server.id));
  res.writeHead(200).end();
}
