import { LoggingLevelSchema } from '@modelcontextprotocol/sdk/types.js';
import type { RuntimeServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { resourceRoute, type Exposed, type GatewayExposure } from './exposure';
import { GatewayRpcError, RPC, type JsonRpcRequest } from './jsonrpc';

/**
 * How the gateway serves one client request: answered here from the approved catalog (lists, ping), sent to one
 * upstream under the upstream's own name, or sent to every upstream (logging level).
 */
export type Route =
  | { kind: 'local'; result: Record<string, unknown>; exposedName: string }
  | { kind: 'upstream'; server: RuntimeServer; message: JsonRpcRequest; exposedName: string }
  | { kind: 'broadcast'; exposedName: string };

const KIND_NAMES = { tool: 'Tool', prompt: 'Prompt', resource: 'Resource' } as const;

function notExposed(kind: keyof typeof KIND_NAMES, name: string): GatewayRpcError {
  return new GatewayRpcError(
    RPC.invalidParams,
    `${KIND_NAMES[kind]} '${name}' is not available on this gateway: it does not exist, or it is new or changed and waits for approval`,
    'refused',
    'not_exposed',
  );
}

function stringParam(request: JsonRpcRequest, name: string): string {
  const value = request.params?.[name];
  if (typeof value !== 'string' || value === '') throw new GatewayRpcError(RPC.invalidParams, `params.${name} must be a non-empty string`, 'error', 'invalid_params');
  return value;
}

function withParams(request: JsonRpcRequest, params: Record<string, unknown>): JsonRpcRequest {
  return { ...request, params: { ...request.params, ...params } };
}

/**
 * A `tools/call` as the upstream gets it: under the tool's own name, and without task augmentation. The gateway declares
 * no `tasks` capability, and a receiver that does not MUST process the request normally, ignoring the augmentation (MCP
 * 2025-11-25, Tasks): passed on, an upstream that has tasks answered with a task the client could not follow here.
 */
function toolCall(request: JsonRpcRequest, upstreamName: string): JsonRpcRequest {
  const { task: _task, ...params } = request.params ?? {};
  return { ...request, params: { ...params, name: upstreamName } };
}

/**
 * A list, answered in one page: the gateway hands out no `nextCursor`, so a `cursor` is one it never issued, and MCP
 * (pagination) has an invalid cursor answered with -32602. Ignored, it made a client asking for a next page get the
 * first one again. A null cursor is how some clients serialise a first page's absent one.
 */
function wholeList(request: JsonRpcRequest, result: Record<string, unknown>): Route {
  if (request.params?.cursor !== undefined && request.params.cursor !== null) {
    throw new GatewayRpcError(RPC.invalidParams, `Invalid cursor: this gateway answers ${request.method} in one page and hands out no cursor; send it without params.cursor`, 'error', 'invalid_params');
  }
  return { kind: 'local', result, exposedName: '' };
}

export function routeRequest(exposure: GatewayExposure, request: JsonRpcRequest): Route {
  switch (request.method) {
    case 'ping':
      return { kind: 'local', result: {}, exposedName: '' };
    case 'tools/list':
      return wholeList(request, { tools: exposure.lists.tools });
    case 'prompts/list':
      return wholeList(request, { prompts: exposure.lists.prompts });
    case 'resources/list':
      return wholeList(request, { resources: exposure.lists.resources });
    case 'resources/templates/list':
      return wholeList(request, { resourceTemplates: exposure.lists.resourceTemplates });
    case 'tools/call': {
      const name = stringParam(request, 'name');
      const tool = exposure.tools.get(name);
      if (!tool) throw notExposed('tool', name);
      return { kind: 'upstream', server: tool.upstream, message: toolCall(request, tool.upstreamName), exposedName: name };
    }
    case 'prompts/get': {
      const name = stringParam(request, 'name');
      const prompt = exposure.prompts.get(name);
      if (!prompt) throw notExposed('prompt', name);
      return { kind: 'upstream', server: prompt.upstream, message: withParams(request, { name: prompt.upstreamName }), exposedName: name };
    }
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe': {
      const uri = stringParam(request, 'uri');
      const resource = resourceRoute(exposure, uri);
      if (!resource) throw notExposed('resource', uri);
      return { kind: 'upstream', server: resource.upstream, message: request, exposedName: uri };
    }
    case 'completion/complete':
      return completionRoute(exposure, request);
    case 'logging/setLevel':
      loggingLevel(request);
      return { kind: 'broadcast', exposedName: '' };
    default:
      throw new GatewayRpcError(RPC.methodNotFound, `Method not found: ${request.method}`, 'error', 'method_not_found');
  }
}

/**
 * The level of a `logging/setLevel`: one of RFC 5424's severities as MCP names them, else -32602 (MCP logging, Error
 * Handling). Checked here because the upstreams' refusals of a fan-out are not the client's answer: an invalid level
 * was answered with success, and sent to every upstream.
 */
function loggingLevel(request: JsonRpcRequest): void {
  const level = request.params?.level;
  if (!LoggingLevelSchema.safeParse(level).success) {
    throw new GatewayRpcError(RPC.invalidParams, `params.level must be one of ${LoggingLevelSchema.options.join(', ')}`, 'error', 'invalid_params');
  }
}

function completionRoute(exposure: GatewayExposure, request: JsonRpcRequest): Route {
  const ref = request.params?.ref as Record<string, unknown> | undefined;
  if (ref?.type === 'ref/prompt' && typeof ref.name === 'string') {
    const prompt = exposure.prompts.get(ref.name);
    if (!prompt) throw notExposed('prompt', ref.name);
    return { kind: 'upstream', server: prompt.upstream, message: withParams(request, { ref: { ...ref, name: prompt.upstreamName } }), exposedName: ref.name };
  }
  if (ref?.type === 'ref/resource' && typeof ref.uri === 'string') {
    const resource = completionResource(exposure, ref.uri);
    if (!resource) throw notExposed('resource', ref.uri);
    return { kind: 'upstream', server: resource.upstream, message: request, exposedName: ref.uri };
  }
  throw new GatewayRpcError(RPC.invalidParams, 'params.ref must be a ref/prompt with a name or a ref/resource with a uri', 'error', 'invalid_params');
}

/**
 * The resource or template a completion names. Its `uri` is a resource's URI or a template itself, so it is looked up
 * as it is: matched as a URI, a hidden template's text could fall under an exposed template that accepts it.
 */
function completionResource(exposure: GatewayExposure, uri: string): Exposed | undefined {
  return exposure.resources.get(uri) ?? exposure.templates.find((candidate) => candidate.upstreamName === uri);
}
