import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { PLATFORM_VERSION, sliceCodePoints } from '@platform/runtime';
import type { McpPrincipal } from '../oauth/resource-server';
import type { DataPlane } from './data-plane';
import { upstreamHeaders } from './data-plane';
import type { ResolvedGateway } from './exposures';
import { GatewayRpcError, isObject, RPC, type JsonRpcRequest } from './jsonrpc';
import { sealSession, type McpSession, type UpstreamSession } from './session';
import { initializeUpstream } from './upstream-sessions';

// Cut by characters, never inside one: half a surrogate pair would go on into the session and the call records.
const text = (value: unknown, max = 200): string => (typeof value === 'string' ? sliceCodePoints(value, max) : '');

/** The largest client `capabilities` object (as JSON) a session takes; real clients send a few hundred characters. */
export const MAX_CLIENT_CAPABILITIES_LENGTH = 4096;

function invalidParams(problem: string): GatewayRpcError {
  return new GatewayRpcError(RPC.invalidParams, `Invalid params: ${problem}`, 'error', 'invalid_params');
}

/**
 * What MCP's InitializeRequest requires, checked as an SDK server checks it (-32602 otherwise): a protocolVersion
 * string, a capabilities object and clientInfo with a name and version. The capabilities go on to every upstream's
 * own initialize, where one that is not an object would fail them all.
 */
function initializeParams(request: JsonRpcRequest): { protocolVersion: string; capabilities: Record<string, unknown>; clientInfo: Record<string, unknown> } {
  const params = request.params ?? {};
  if (typeof params.protocolVersion !== 'string') throw invalidParams('params.protocolVersion must be a string');
  if (!isObject(params.capabilities)) throw invalidParams('params.capabilities must be an object');
  const clientInfo = params.clientInfo;
  if (!isObject(clientInfo) || typeof clientInfo.name !== 'string' || typeof clientInfo.version !== 'string') {
    throw invalidParams('params.clientInfo must be an object with a name and a version (strings)');
  }
  return { protocolVersion: text(params.protocolVersion, 40), capabilities: params.capabilities, clientInfo };
}

/**
 * `initialize`: negotiates the protocol version, opens a session with every upstream server of the gateway at once
 * (declaring the client's name and capabilities), and seals the result into the session id. An upstream that
 * cannot be reached now does not fail the client: its session is opened on first use.
 */
export async function initializeSession(
  plane: DataPlane,
  principal: McpPrincipal,
  resolved: ResolvedGateway,
  request: JsonRpcRequest,
): Promise<{ sessionId: string; session: McpSession; result: Record<string, unknown> }> {
  const { protocolVersion: requested, capabilities, clientInfo } = initializeParams(request);
  const protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
  // Sealed into the session id and kept with every open session: bounded, so a client cannot make either large.
  if (JSON.stringify(capabilities).length > MAX_CLIENT_CAPABILITIES_LENGTH) {
    throw invalidParams(`params.capabilities may take at most ${MAX_CLIENT_CAPABILITIES_LENGTH} characters as JSON`);
  }
  const client = { protocolVersion, clientName: text(clientInfo.name), clientVersion: text(clientInfo.version, 60), clientCapabilities: capabilities };

  // Legacy SSE upstreams hold a live connection per replica: opened on first use (legacy-sse.ts), not sealed here.
  const servers = resolved.exposure.runtime.servers.filter((server) => server.transport !== 'sse');
  const ctx = { plane, principal, resolved };
  const opened = await Promise.allSettled(
    servers.map(async (server) =>
      initializeUpstream(server, await upstreamHeaders(ctx, server), client, {
        dispatcher: plane.dispatcher,
        maxMessageBytes: plane.settings.maxMessageBytes,
        timeoutSeconds: server.timeoutSeconds,
      }),
    ),
  );
  const upstreams: Record<string, UpstreamSession> = {};
  opened.forEach((outcome, index) => {
    const server = servers[index]!;
    if (outcome.status === 'fulfilled') upstreams[server.id] = outcome.value;
    else plane.deps.logger.warn({ serverId: server.id, server: server.slug, err: outcome.reason }, 'an upstream MCP server could not be initialized; retrying on first use');
  });

  const gateway = resolved.exposure.runtime.gateway!;
  const session: McpSession = { gatewayId: gateway.id, personId: principal.personId, ...client, upstreams, createdAt: Math.floor(Date.now() / 1000) };
  const result = {
    protocolVersion,
    capabilities: {
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      completions: {},
      logging: {},
    },
    serverInfo: { name: gateway.slug, title: gateway.name, version: PLATFORM_VERSION },
  };
  return { sessionId: sealSession(plane.box, session), session, result };
}
