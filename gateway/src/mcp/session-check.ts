import type { IncomingMessage } from 'node:http';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { McpPrincipal } from '../oauth/resource-server';
import type { DataPlane } from './data-plane';
import { McpHttpError } from './http-errors';
import { RPC } from './jsonrpc';
import { openSession, sessionKeyOf, type McpSession } from './session';

export interface OpenedSession {
  id: string;
  key: string;
  session: McpSession;
}

/**
 * The client's session, from its `Mcp-Session-Id`: 400 without one; 404 when it is not a session of this gateway
 * and person, is older than the maximum age, or was ended. A `MCP-Protocol-Version` header, when sent, must be a
 * version this gateway speaks (400 otherwise).
 */
export async function requireSession(plane: DataPlane, req: IncomingMessage, principal: McpPrincipal): Promise<OpenedSession> {
  const id = req.headers['mcp-session-id'];
  if (typeof id !== 'string' || id === '') throw McpHttpError.sessionRequired();
  // Opening is a pure function of the id (decrypt, parse, hash): remembered; owner, age and end are checked every time.
  let opened = plane.openedSessions.get(id);
  if (!opened) {
    const session = openSession(plane.box, id);
    if (!session) throw McpHttpError.sessionNotFound();
    opened = { id, key: sessionKeyOf(id), session };
    plane.openedSessions.set(id, opened);
  }
  const { session, key } = opened;
  if (session.gatewayId !== principal.gateway.id || session.personId !== principal.personId) throw McpHttpError.sessionNotFound();
  if (Date.now() / 1000 - session.createdAt > plane.settings.sessionMaxAgeSeconds) throw McpHttpError.sessionNotFound();
  if (await plane.liveness.isEnded(key)) throw McpHttpError.sessionNotFound();
  const version = req.headers['mcp-protocol-version'];
  if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    throw new McpHttpError(400, RPC.invalidRequest, `Bad Request: unsupported protocol version ${version} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
  }
  return { id, key, session };
}
