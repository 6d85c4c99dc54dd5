import type { DataPlane } from './data-plane';
import { McpHttpError } from './http-errors';

/** The SDK server's answer to a second GET stream of a session: JSON-RPC's generic "server error" code. */
const CONFLICT_CODE = -32000;
const CONFLICT_MESSAGE = 'Conflict: Only one SSE stream is allowed per session';

/** Per data plane (one per edge, so per replica): the client sessions with a live GET stream here, and how to end it. */
const liveStreams = new WeakMap<DataPlane, Map<string, () => void>>();

/**
 * The plane's open streams, made on first use. A session ended anywhere (its DELETE on this replica or announced by
 * another, session-liveness.ts) ends its stream here: nothing may reach a client in a session it ended, and the
 * stream's relays would otherwise reopen upstream sessions the DELETE just closed.
 */
function streamsOf(plane: DataPlane): Map<string, () => void> {
  const known = liveStreams.get(plane);
  if (known) return known;
  const live = new Map<string, () => void>();
  liveStreams.set(plane, live);
  plane.liveness.onEnded((sessionKey) => live.get(sessionKey)?.());
  return live;
}

/**
 * Claims the one GET stream a client session may have on this replica. MCP forbids sending a message on more than
 * one stream; with two, the gateway's own list-changed notices would reach both, and each would open its own GET to
 * every upstream (one that allows a single stream per session refuses the second). A second claim while the first
 * holds is refused with 409 and a JSON-RPC error, as the SDK's server answers. The claim ends when the client's
 * connection closes (`closed` aborts), so a client that reconnects after losing its stream is served at once. `end`
 * ends the stream when its session ends.
 */
export function claimGetStream(plane: DataPlane, sessionKey: string, closed: AbortSignal, end: () => void): void {
  const live = streamsOf(plane);
  if (live.has(sessionKey)) throw new McpHttpError(409, CONFLICT_CODE, CONFLICT_MESSAGE);
  // A client already gone holds nothing: its abort has fired and would never release the claim.
  if (closed.aborted) return;
  live.set(sessionKey, end);
  closed.addEventListener('abort', () => live.delete(sessionKey), { once: true });
}
