import { isObject, type JsonRpcId, type JsonRpcRequest } from './jsonrpc';

/**
 * Ids of requests an upstream sends the client (sampling, elicitation, roots), as the client sees them: they name the
 * upstream server and carry its own id, so the client's answer can be routed back by whichever replica receives it,
 * and two upstreams' ids never collide. Not secret: the upstream session comes from the sealed client session.
 * The progress token such a request carries is renamed the same way (under a prefix of its own), so the client's
 * `notifications/progress` goes back to that upstream alone, with its own token.
 */
const RELAY_ID_PREFIX = 'gw-relay.';
const PROGRESS_TOKEN_PREFIX = 'gw-progress.';

/** An upstream's id or token: `{prefix}{serverId}.{base64url of its JSON}` (server ids are UUIDs: no dot). */
function encode(prefix: string, serverId: string, value: JsonRpcId): string {
  return `${prefix}${serverId}.${Buffer.from(JSON.stringify(value)).toString('base64url')}`;
}

function decode(prefix: string, value: unknown): { serverId: string; value: JsonRpcId } | null {
  if (typeof value !== 'string' || !value.startsWith(prefix)) return null;
  const rest = value.slice(prefix.length);
  const dot = rest.indexOf('.');
  if (dot <= 0) return null;
  try {
    const original = JSON.parse(Buffer.from(rest.slice(dot + 1), 'base64url').toString('utf8')) as unknown;
    if (typeof original !== 'string' && typeof original !== 'number') return null;
    return { serverId: rest.slice(0, dot), value: original };
  } catch {
    return null;
  }
}

export function relayIdOf(serverId: string, upstreamId: JsonRpcId): string {
  return encode(RELAY_ID_PREFIX, serverId, upstreamId);
}

export function parseRelayId(id: JsonRpcId | null): { serverId: string; upstreamId: JsonRpcId } | null {
  const decoded = decode(RELAY_ID_PREFIX, id);
  return decoded && { serverId: decoded.serverId, upstreamId: decoded.value };
}

/** The upstream and its own token behind a progress token the gateway handed the client; null for any other token. */
export function parseProgressToken(token: unknown): { serverId: string; upstreamToken: JsonRpcId } | null {
  const decoded = decode(PROGRESS_TOKEN_PREFIX, token);
  return decoded && { serverId: decoded.serverId, upstreamToken: decoded.value };
}

/**
 * An upstream's request as the client is asked it: under a relay id, and with its `_meta.progressToken` (MCP: a string
 * or an integer; anything else is left as it is) renamed to name the upstream. Unrenamed, two upstreams could hand
 * the client the same token, and the client's progress could not tell which of them it is for.
 */
export function questionForClient(serverId: string, request: JsonRpcRequest): JsonRpcRequest {
  const question = { ...request, id: relayIdOf(serverId, request.id) };
  const meta = request.params?._meta;
  if (!isObject(meta) || (typeof meta.progressToken !== 'string' && typeof meta.progressToken !== 'number')) return question;
  return { ...question, params: { ...request.params, _meta: { ...meta, progressToken: encode(PROGRESS_TOKEN_PREFIX, serverId, meta.progressToken) } } };
}
