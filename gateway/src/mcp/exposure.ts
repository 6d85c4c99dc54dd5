import type { GatewayRuntime, RuntimeCapability, RuntimeServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { GatewayRpcError, RPC } from './jsonrpc';
import { UriTemplateMatcher } from './uri-template-matcher';

/**
 * The longest resource URI matched against resource templates (a listed resource's URI is served whatever its
 * length): matching costs up to the URI's length times the templates' size, and real URIs are far shorter (a path
 * is at most 4,096 bytes on Linux). docs/gateway.md, What is exposed; docs/performance.md for the measurement.
 */
export const MAX_RESOURCE_URI_LENGTH = 4096;

/**
 * The most work one URI may cost across a gateway's templates (a step: one automaton state advanced over one
 * character). A realistic template costs at most a few steps per character, and most stop at their first literal;
 * only a gateway of huge or very many overlapping templates reaches it, and its read is refused, never slow.
 */
export const MAX_TEMPLATE_MATCH_STEPS = 100_000;

/**
 * What one gateway exposes, indexed for the data plane: every approved, unchanged capability of its servers under
 * its exposed name, and the list answers precomputed. Built from the catalog's ResolveGateway answer, which already
 * left out everything unapproved, changed, gone, unpublished or disabled, and every capability whose name another
 * one, approved earlier, holds.
 */
export interface Exposed {
  upstream: RuntimeServer;
  /** The name (or URI) the upstream knows. */
  upstreamName: string;
  /** The approved definition. */
  definition: Record<string, unknown>;
}

export interface GatewayExposure {
  runtime: GatewayRuntime;
  servers: ReadonlyMap<string, RuntimeServer>;
  tools: ReadonlyMap<string, Exposed>;
  prompts: ReadonlyMap<string, Exposed>;
  resources: ReadonlyMap<string, Exposed>;
  /** Earliest approval first: a template approved later never captures URIs an earlier one matched. */
  templates: ReadonlyArray<Exposed & { template: UriTemplateMatcher }>;
  /** `tools/list`, `prompts/list`, `resources/list` and `resources/templates/list` results. */
  lists: {
    tools: Record<string, unknown>[];
    prompts: Record<string, unknown>[];
    resources: Record<string, unknown>[];
    resourceTemplates: Record<string, unknown>[];
  };
}

function definitionOf(capability: RuntimeCapability): Record<string, unknown> {
  try {
    const parsed = JSON.parse(capability.definitionJson) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function buildExposure(runtime: GatewayRuntime): GatewayExposure {
  const servers = new Map<string, RuntimeServer>();
  const tools = new Map<string, Exposed>();
  const prompts = new Map<string, Exposed>();
  const resources = new Map<string, Exposed>();
  const templates: Array<Exposed & { template: UriTemplateMatcher; approvedAt: number }> = [];
  const lists: GatewayExposure['lists'] = { tools: [], prompts: [], resources: [], resourceTemplates: [] };

  for (const server of runtime.servers) {
    servers.set(server.id, server);
    for (const capability of server.capabilities) {
      const definition = definitionOf(capability);
      const exposed: Exposed = { upstream: server, upstreamName: capability.name, definition };
      switch (capability.kind) {
        case 'tool':
          if (tools.has(capability.exposedName)) break;
          tools.set(capability.exposedName, exposed);
          lists.tools.push({ ...definition, name: capability.exposedName });
          break;
        case 'prompt':
          if (prompts.has(capability.exposedName)) break;
          prompts.set(capability.exposedName, exposed);
          lists.prompts.push({ ...definition, name: capability.exposedName });
          break;
        case 'resource':
          if (resources.has(capability.name)) break;
          resources.set(capability.name, exposed);
          lists.resources.push(definition);
          break;
        case 'resource_template':
          try {
            templates.push({ ...exposed, template: new UriTemplateMatcher(capability.name), approvedAt: approvedAtOf(capability) });
            lists.resourceTemplates.push(definition);
          } catch {
            // A template the SDK cannot parse cannot be routed; it stays hidden.
          }
          break;
      }
    }
  }
  // A stable sort: templates approved at the same moment stay in gateway order.
  templates.sort((a, b) => a.approvedAt - b.approvedAt);
  return { runtime, servers, tools, prompts, resources, templates, lists };
}

/** A catalog that does not say (older than the field) leaves every template in gateway order. */
function approvedAtOf(capability: RuntimeCapability): number {
  const at = capability.approvedAt ? Date.parse(capability.approvedAt) : NaN;
  return Number.isNaN(at) ? 0 : at;
}

const uriRefused = (message: string) => new GatewayRpcError(RPC.invalidParams, message, 'error', 'invalid_params');

/**
 * The server that serves a resource URI: an exact resource first, then the first template that matches, in the
 * order of their approval. A URI longer than MAX_RESOURCE_URI_LENGTH, or one whose matching would cost more than
 * MAX_TEMPLATE_MATCH_STEPS, is refused (JSON-RPC invalid params) before or instead of any upstream call.
 */
export function resourceRoute(exposure: GatewayExposure, uri: string): Exposed | undefined {
  const exact = exposure.resources.get(uri);
  if (exact) return exact;
  if (uri.length > MAX_RESOURCE_URI_LENGTH) {
    throw uriRefused(`params.uri is ${uri.length} characters long; the gateway matches URIs of at most ${MAX_RESOURCE_URI_LENGTH} characters against resource templates`);
  }
  const budget = { steps: MAX_TEMPLATE_MATCH_STEPS };
  for (const candidate of exposure.templates) {
    const matched = candidate.template.matches(uri, budget);
    if (matched === undefined) throw uriRefused('params.uri takes more work to match against this gateway\'s resource templates than the gateway allows; use a shorter URI');
    if (matched) return candidate;
  }
  return undefined;
}
