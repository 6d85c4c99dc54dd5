import { createHash } from 'node:crypto';
import type { RuntimeServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import type { Cache } from '@platform/runtime';
import { BoundedMap } from '../bounded-map';
import { GatewayRpcError, isResponse, RPC, type JsonRpcResponse } from './jsonrpc';
import type { McpSession, UpstreamSession } from './session';
import { postToUpstream, type PostOptions, type UpstreamEndpoint } from './upstream-client';
import { protocolError, upstreamFailure } from './upstream-errors';

/**
 * What an upstream's session id and protocol version may be: both are sealed into every client session id of the
 * gateway and sent back as headers, so an upstream must not be able to inflate them past the client's header limit
 * (one such upstream would break every session of its gateways) or put anything but a header's characters in them.
 * The MCP transport allows visible ASCII only in a session id; real servers send UUIDs or a few dozen characters.
 */
export const MAX_UPSTREAM_SESSION_ID_LENGTH = 256;
const UPSTREAM_SESSION_ID = new RegExp(`^[\\x21-\\x7E]{0,${MAX_UPSTREAM_SESSION_ID_LENGTH}}$`);
const PROTOCOL_VERSION = /^[\x21-\x7E]{1,64}$/;

/** Addresses of the servers of the exposures in use, each hashed once (the same objects serve every request). */
const addresses = new WeakMap<RuntimeServer, string>();

/**
 * What an upstream session is bound to: the server's URL, as a short hash (sealed into the client's session id for
 * every upstream, so a full URL of up to 2,048 characters would not do). A session issued at one address is never
 * sent to another: the server's new address would otherwise receive its old address's session id, and the first
 * call after a move would fail with 404 before a new session was opened.
 */
export function upstreamAddressOf(server: RuntimeServer): string {
  let address = addresses.get(server);
  if (address === undefined) {
    address = createHash('sha256').update(server.url).digest('base64url').slice(0, 16);
    addresses.set(server, address);
  }
  return address;
}

/** What an upstream is told about the client at `initialize`: the client's own name, version and capabilities. */
export interface ClientDescription {
  protocolVersion: string;
  clientName: string;
  clientVersion: string;
  clientCapabilities: Record<string, unknown>;
}

/**
 * Opens an upstream session the way an MCP client does: `initialize` (declaring the client's capabilities, so the
 * upstream may ask for sampling, elicitation or roots, which the gateway relays), then `notifications/initialized`.
 */
export async function initializeUpstream(
  server: RuntimeServer,
  headers: Record<string, string>,
  client: ClientDescription,
  options: Omit<PostOptions, 'signal'>,
): Promise<UpstreamSession> {
  const signal = AbortSignal.timeout(server.timeoutSeconds * 1000);
  const endpoint: UpstreamEndpoint = { serverSlug: server.slug, url: server.url, headers, sessionId: '', protocolVersion: '' };
  const request = {
    jsonrpc: '2.0' as const,
    id: 'gateway-initialize',
    method: 'initialize',
    params: {
      protocolVersion: client.protocolVersion,
      capabilities: client.clientCapabilities,
      clientInfo: { name: client.clientName, version: client.clientVersion },
    },
  };
  try {
    const answer = await postToUpstream(endpoint, request, { ...options, signal });
    let response: JsonRpcResponse | undefined;
    let sessionId = '';
    if (answer.kind === 'json' && isResponse(answer.message)) {
      response = answer.message;
      sessionId = answer.sessionId;
    } else if (answer.kind === 'stream') {
      sessionId = answer.sessionId;
      for await (const item of answer.messages) {
        if ('message' in item && isResponse(item.message) && item.message.id === request.id) {
          response = item.message;
          break;
        }
      }
    }
    if (!response) throw new GatewayRpcError(RPC.upstreamProtocolError, `Upstream server '${server.slug}' did not answer initialize`, 'error', 'protocol_error');
    if ('error' in response) {
      throw new GatewayRpcError(RPC.upstreamUnavailable, `Upstream server '${server.slug}' refused to initialize`, 'upstream_unavailable', 'upstream_error');
    }
    if (!UPSTREAM_SESSION_ID.test(sessionId)) {
      throw protocolError(server.slug, `a session id that is not ${MAX_UPSTREAM_SESSION_ID_LENGTH} or fewer visible ASCII characters`);
    }
    const protocolVersion = typeof response.result.protocolVersion === 'string' ? response.result.protocolVersion : client.protocolVersion;
    if (!PROTOCOL_VERSION.test(protocolVersion)) throw protocolError(server.slug, 'a malformed protocol version');
    const established: UpstreamEndpoint = { ...endpoint, sessionId, protocolVersion };
    await postToUpstream(established, { jsonrpc: '2.0', method: 'notifications/initialized' }, { ...options, signal });
    return { sessionId, protocolVersion, address: upstreamAddressOf(server) };
  } catch (error) {
    throw upstreamFailure(server.slug, error, server.timeoutSeconds);
  }
}

/**
 * Upstream sessions that replaced the ones sealed in a client's session id (an upstream that was down at the
 * client's `initialize`, or that forgot its session). The session id cannot change, so replacements live in the
 * shared cache for the session's lifetime (any replica finds them) and in this replica's memory.
 */
export class UpstreamSessionOverrides {
  private readonly local = new BoundedMap<string, UpstreamSession>(50_000);

  constructor(
    private readonly cache: Cache,
    private readonly ttlMs: number,
  ) {}

  private key(sessionKey: string, serverId: string): string {
    return `mcp:upstream-session:${sessionKey}:${serverId}`;
  }

  /** The replacement known here, without asking the cache (the hot path). */
  known(sessionKey: string, serverId: string): UpstreamSession | undefined {
    return this.local.get(this.key(sessionKey, serverId));
  }

  /** The replacement any replica stored, or undefined. */
  async shared(sessionKey: string, serverId: string): Promise<UpstreamSession | undefined> {
    const key = this.key(sessionKey, serverId);
    try {
      const text = await this.cache.get(key);
      if (!text) return undefined;
      const stored = JSON.parse(text) as UpstreamSession;
      this.local.set(key, stored);
      return stored;
    } catch {
      return undefined;
    }
  }

  async store(sessionKey: string, serverId: string, upstream: UpstreamSession): Promise<void> {
    const key = this.key(sessionKey, serverId);
    this.local.set(key, upstream);
    try {
      await this.cache.set(key, JSON.stringify(upstream), this.ttlMs);
    } catch {
      // Without the cache another replica re-initializes on its own; the session still works.
    }
  }

  forgetSession(sessionKey: string, serverIds: readonly string[]): void {
    for (const serverId of serverIds) this.local.delete(this.key(sessionKey, serverId));
  }
}

/** Whether the upstream session was opened at the server's current address. */
export function openedAtCurrentAddress(upstream: UpstreamSession | undefined, server: RuntimeServer): upstream is UpstreamSession {
  return upstream !== undefined && upstream.address === upstreamAddressOf(server);
}

/**
 * The upstream session to use now: a replacement known here, else the sealed one, else none (initialize first).
 * Only one opened at the server's current address counts (upstreamAddressOf).
 */
export function currentUpstreamSession(overrides: UpstreamSessionOverrides, session: McpSession, sessionKey: string, server: RuntimeServer): UpstreamSession | undefined {
  const replacement = overrides.known(sessionKey, server.id);
  if (openedAtCurrentAddress(replacement, server)) return replacement;
  const sealed = session.upstreams[server.id];
  return openedAtCurrentAddress(sealed, server) ? sealed : undefined;
}
