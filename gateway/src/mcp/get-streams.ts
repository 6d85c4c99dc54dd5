import type { DataPlane } from './data-plane';
import { McpHttpError } from './http-errors';

/** The SDK server's answer to a second GET stream of a session: JSON-RPC's generic "server error" code. */
const CONFLICT_CODE = -32000;
const CONFLICT_MESSAGE = 'Conflict: Only one SSE stream is allowed per session';

/** Per data plane (one per edge, so per replica): the client sessions with a live GET stream here. */
const liveStreams = new WeakMap<DataPlane, Set<string>>();

/**
 * Claims the one GET stream a client session may have on this replica. MCP forbids sending a message on more than
 * one stream; with two, the gateway's own list-changed notices would reach both, and each would open its own GET to
 * every upstream (one that allows a single stream per session refuses the second). A second claim while the first
 * holds is refused with 409 and a JSON-RPC error, as the SDK's server answers. The claim ends when the client's
 * connection closes (`closed` aborts), so a client that reconnects after losing its stream is served at once.
 */
export function claimGetStream(plane: DataPlane, sessionKey: string, closed: AbortSignal): void {
  let live = liveStreams.get(plane);
  if (!live) liveStreams.set(plane, (live = new Set()));
  if (live.has(sessionKey)) throw new McpHttpError(409, CONFLICT_CODE, CONFLICT_MESSAGE);
  // A client already gone holds nothing: its abort has fired and would never release the claim.
  if (closed.aborted) return;
  live.add(sessionKey);
  const held = live;
  closed.addEventListener('abort', () => held.delete(sessionKey), { once: true });
}
