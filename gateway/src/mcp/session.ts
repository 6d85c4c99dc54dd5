import { createHash } from 'node:crypto';
import type { SecretBox } from '@platform/runtime';

/**
 * A client's MCP session, sealed into its `Mcp-Session-Id` (AES-256-GCM with the installation's key ring), so that
 * any replica can serve any request of the session without shared state: the gateway, the person it belongs to,
 * what the client said at `initialize`, and the session each upstream server gave the gateway.
 * Only the gateway can read or forge it; a session id is refused for another gateway or person.
 */
export interface McpSession {
  gatewayId: string;
  personId: string;
  /** The protocol version negotiated with the client. */
  protocolVersion: string;
  clientName: string;
  clientVersion: string;
  /** The client's capabilities (sampling, elicitation, roots), declared to upstreams on its behalf. */
  clientCapabilities: Record<string, unknown>;
  /** Per upstream server id: its session id ('' for a stateless upstream) and negotiated version. */
  upstreams: Record<string, UpstreamSession>;
  /** Seconds since the epoch. */
  createdAt: number;
}

export interface UpstreamSession {
  sessionId: string;
  protocolVersion: string;
  /**
   * The address the upstream session was opened at (`upstreamAddressOf`, upstream-sessions.ts): a session belongs to
   * the server that issued it, so once the server's URL changes it is neither sent to the new address nor used.
   */
  address: string;
}

/** Associated data: a sealed value made for another purpose never opens as a session. */
const PURPOSE = 'mcp-session.v1';

interface SealedForm {
  g: string;
  p: string;
  v: string;
  c: string;
  cv: string;
  cc: Record<string, unknown>;
  /** Per server id: session id, protocol version, address (absent in ids sealed before addresses were: none matches). */
  u: Record<string, [string, string, string?]>;
  t: number;
}

export function sealSession(box: SecretBox, session: McpSession): string {
  const form: SealedForm = {
    g: session.gatewayId,
    p: session.personId,
    v: session.protocolVersion,
    c: session.clientName,
    cv: session.clientVersion,
    cc: session.clientCapabilities,
    u: Object.fromEntries(Object.entries(session.upstreams).map(([id, up]) => [id, [up.sessionId, up.protocolVersion, up.address]])),
    t: session.createdAt,
  };
  return box.encrypt(JSON.stringify(form), PURPOSE);
}

/** The session sealed in `id`, or null when it is not one of ours (altered, foreign, or from a retired key). */
export function openSession(box: SecretBox, id: string): McpSession | null {
  if (id.length > 16_384 || !/^[\x21-\x7e]+$/.test(id)) return null;
  let form: SealedForm;
  try {
    form = JSON.parse(box.decrypt(id, PURPOSE)) as SealedForm;
  } catch {
    return null;
  }
  return {
    gatewayId: form.g,
    personId: form.p,
    protocolVersion: form.v,
    clientName: form.c,
    clientVersion: form.cv,
    clientCapabilities: form.cc,
    upstreams: Object.fromEntries(
      Object.entries(form.u).map(([serverId, [sessionId, protocolVersion, address = '']]) => [serverId, { sessionId, protocolVersion, address }]),
    ),
    createdAt: form.t,
  };
}

/** A short, non-secret handle of a session id for cache keys and signals (the id itself is a bearer value). */
export function sessionKeyOf(id: string): string {
  return createHash('sha256').update(id).digest('base64url').slice(0, 32);
}
