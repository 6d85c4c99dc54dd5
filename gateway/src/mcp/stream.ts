import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RuntimeServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import type { McpPrincipal } from '../oauth/resource-server';
import { ClientReply } from './client-reply';
import { endpointFor, type CallContext, type DataPlane } from './data-plane';
import { toClient } from './forward';
import { McpHttpError } from './http-errors';
import { RPC, type JsonRpcMessage } from './jsonrpc';
import { requireSession } from './session-check';
import { endUpstreamSession, openUpstreamStream } from './upstream-client';
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
 * GET /mcp/{slug}: the client's stream of server-initiated messages. The gateway merges the GET streams of every
 * upstream (their notifications, and their questions with relay ids), reconnecting to an upstream whose stream drops,
 * and adds its own list-changed notifications when the catalog changes what the gateway exposes.
 */
export async function handleGet(plane: DataPlane, req: IncomingMessage, res: ServerResponse, principal: McpPrincipal, readAt: number): Promise<void> {
  const accept = req.headers.accept ?? '';
  if (!accept.includes('text/event-stream')) throw new McpHttpError(406, RPC.invalidRequest, 'Not Acceptable: the client must accept text/event-stream');
  const { key, session } = await requireSession(plane, req, principal);
  const resolved = await plane.exposures.get(principal.gateway.slug, readAt);
  const ctx: CallContext = { plane, principal, resolved, session, sessionKey: key };

  const reply = new ClientReply(res);
  reply.startStream();
  const closed = new AbortController();
  res.on('close', () => closed.abort());
  const keepAlive = setInterval(() => reply.keepAlive(), KEEP_ALIVE_MS);
  const gatewayId = principal.gateway.id;
  const stopListening = plane.exposures.onChange((gatewayIds) => {
    if (gatewayIds.length === 0 || gatewayIds.includes(gatewayId)) for (const message of LIST_CHANGES) reply.send(message);
  });
  try {
    await Promise.all(resolved.exposure.runtime.servers.map((server) => pumpUpstream(ctx, server, reply, closed.signal)));
    // Every upstream is done (none offers a stream): keep the client's stream for the gateway's own notices.
    await new Promise<void>((resolve) => (closed.signal.aborted ? resolve() : closed.signal.addEventListener('abort', () => resolve())));
  } finally {
    clearInterval(keepAlive);
    stopListening();
    reply.end();
  }
}

/** Relays one upstream's GET stream until the client leaves; null from the upstream (no stream offered) ends it. */
async function pumpUpstream(ctx: CallContext, server: RuntimeServer, reply: ClientReply, closed: AbortSignal): Promise<void> {
  let delay = RETRY_MIN_MS;
  while (!closed.aborted) {
    try {
      const endpoint = await endpointFor(ctx, server);
      const items = await openUpstreamStream(endpoint, { dispatcher: ctx.plane.dispatcher, signal: closed, timeoutSeconds: server.timeoutSeconds });
      if (!items) return;
      delay = RETRY_MIN_MS;
      for await (const item of items) {
        if (!('message' in item)) continue;
        const relayed = toClient(ctx, server, item.message);
        if (relayed) reply.send(relayed);
      }
    } catch (error) {
      if (closed.aborted) return;
      ctx.plane.deps.logger.debug({ err: error, serverId: server.id }, 'an upstream GET stream failed; reconnecting');
    }
    await new Promise((resolve) => setTimeout(resolve, delay).unref());
    delay = Math.min(delay * 2, RETRY_MAX_MS);
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
      if (!currentUpstreamSession(plane.overrides, session, key, server.id)) return;
      const endpoint = await endpointFor(ctx, server);
      await endUpstreamSession(endpoint, { dispatcher: plane.dispatcher, timeoutSeconds: server.timeoutSeconds });
    }),
  );
  plane.overrides.forgetSession(key, resolved.exposure.runtime.servers.map((server) => server.id));
  res.writeHead(200).end();
}
