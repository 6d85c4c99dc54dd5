import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import type { GatewayRuntime, RuntimeCapability, RuntimeServer } from '@platform/proto/gen/platform/catalog/v1/catalog';

/**
 * What one gateway exposes, indexed for the data plane: every approved, unchanged capability of its servers under
 * its exposed name, and the list answers precomputed. Built from the catalog's ResolveGateway answer, which already
 * left out everything unapproved, changed, gone, unpublished or disabled, and every later name collision.
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
  templates: ReadonlyArray<Exposed & { template: UriTemplate }>;
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
  const templates: Array<Exposed & { template: UriTemplate }> = [];
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
            templates.push({ ...exposed, template: new UriTemplate(capability.name) });
            lists.resourceTemplates.push(definition);
          } catch {
            // A template the SDK cannot parse cannot be routed; it stays hidden.
          }
          break;
      }
    }
  }
  return { runtime, servers, tools, prompts, resources, templates, lists };
}

/** The server that serves a resource URI: an exact resource first, then the first template that matches. */
export function resourceRoute(exposure: GatewayExposure, uri: string): Exposed | undefined {
  const exact = exposure.resources.get(uri);
  if (exact) return exact;
  return exposure.templates.find((candidate) => {
    try {
      return candidate.template.match(uri) !== null;
    } catch {
      return false;
    }
  });
}
