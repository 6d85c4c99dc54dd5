import { z } from 'zod';
import { MCP_SERVER_MANAGERS, TEAM_MEMBERS_AND_PLATFORM_STAFF } from '../auth/policy';
import { requestContextOf, teamOf } from '../auth/caller';
import type { EdgeDeps } from '../edge-deps';
import { capabilitySchema, presentCapability } from '../presenters/capability';
import { defineRoute, type AnyRouteDefinition } from '../route';
import { teamParam } from '../team-ref';

const MANAGE = MCP_SERVER_MANAGERS;
const READ = TEAM_MEMBERS_AND_PLATFORM_STAFF;

const serverParams = z.object({ team: teamParam, serverId: z.uuid().meta({ description: 'MCP server id.' }) });
const capabilityList = z.array(capabilitySchema);

/** Capabilities of a team's MCP servers: discovering them upstream, and reading what was discovered. */
export function capabilityRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  // Read at request time: the route catalogue builds routes without clients.
  const catalog = () => deps.clients.catalog;

  return [
    defineRoute({
      method: 'post',
      path: '/v1/teams/{team}/mcp-servers/{serverId}/refresh',
      operationId: 'refreshMcpServer',
      summary: 'Discover an MCP server\'s capabilities',
      description:
        'Connects to the server (through the address guard, with its credential and timeout) and lists its tools, ' +
        'resources, resource templates and prompts. New capabilities are stored unapproved; changed definitions get a ' +
        'new fingerprint; missing ones get `goneAt`. Audited as `mcp_server.refresh` (counts only).',
      tags: ['mcp-servers'],
      auth: MANAGE,
      request: { params: serverParams },
      responses: {
        200: { description: 'The server\'s present capabilities, by kind then name', schema: capabilityList },
        503: { description: 'The server could not be reached or answered wrongly (`unavailable`); recorded as its last refresh error' },
      },
      handler: async (ctx) => {
        const response = await catalog().refreshMcpServer({ context: requestContextOf(ctx), teamId: teamOf(ctx).id, serverId: ctx.params.serverId });
        return { data: response.capabilities.map(presentCapability) };
      },
    }),

    defineRoute({
      method: 'get',
      path: '/v1/teams/{team}/mcp-servers/{serverId}/capabilities',
      operationId: 'listCapabilities',
      summary: 'List an MCP server\'s capabilities',
      tags: ['mcp-servers'],
      auth: READ,
      request: {
        params: serverParams,
        query: z.object({ includeGone: z.boolean().default(false).meta({ description: 'Include capabilities gone upstream.' }) }),
      },
      responses: { 200: { description: 'The server\'s capabilities, by kind then name', schema: capabilityList } },
      handler: async (ctx) => {
        const response = await catalog().listCapabilities({ teamId: teamOf(ctx).id, serverId: ctx.params.serverId, includeGone: ctx.query.includeGone });
        return { data: response.capabilities.map(presentCapability) };
      },
    }),
  ];
}
