import type { JsonRpcId } from './jsonrpc';

/**
 * Ids of requests an upstream sends the client (sampling, elicitation, roots), as the client sees them: they name the
 * upstream server and carry its own id, so the client's answer can be routed back by whichever replica receives it,
 * and two upstreams' ids never collide. Not secret: the upstream session comes from the sealed client session.
 */
const PREFIX = 'gw-relay.';

export function relayIdOf(serverId: string, upstreamId: JsonRpcId): string {
  return `${PREFIX}${serverId}.${Buffer.from(JSON.stringify(upstreamId)).toString('base64url')}`;
}

export function parseRelayId(id: JsonRpcId | null): { serverId: string; upstreamId: JsonRpcId } | null {
  if (typeof id !== 'string' || !id.startsWith(PREFIX)) return null;
  const rest = id.slice(PREFIX.length);
  const dot = rest.indexOf('.');
  if (dot <= 0) return null;
  try {
    const upstreamId = JSON.parse(Buffer.from(rest.slice(dot + 1), 'base64url').toString('utf8')) as unknown;
    if (typeof upstreamId !== 'string' && typeof upstreamId !== 'number') return null;
    return { serverId: rest.slice(0, dot), upstreamId };
  } catch {
    return null;
  }
}
