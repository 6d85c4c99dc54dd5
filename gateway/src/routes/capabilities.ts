import { z } from 'zod';
import { MCP_SERVER_MANAGERS, TEAM_MEMBERS_AND_PLATFORM_STAFF } from '../auth/policy';
import { requestContextOf, teamOf } from '../auth/caller';
import { REFRESH_DEADLINE_MS } from '../catalog-limits';
import type { EdgeDeps } from '../edge-deps';
import { pageQuery, pageResponse } from '../pagination';
import { capabilitySchema, presentCapability } from '../presenters/capability';
import { defineRoute, type AnyRouteDefinition } from '../route';
import { teamParam } from '../team-ref';

const MANAGE = MCP_SERVER_MANAGERS;
const READ = TEAM_MEMBERS_AND_PLATFORM_STAFF;

const serverParams = z.object({ team: teamParam, serverId: z.uuid().meta({ description: 'MCP server id.' }) });
const capabilityPage = pageResponse(capabilitySchema);

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
        'new fingerprint; missing ones get `goneAt`. Audited as `mcp_server.refresh` (counts only). A server listing more ' +
        'than 10,000 capabilities (all kinds together) is refused: nothing is stored and the refresh fails. Answers the first ' +
        'page of the present capabilities (`limit` as in lists); `nextCursor` continues with `GET …/capabilities` ' +
        '(without `includeGone`). Answers when the discovery ends, which may take up to max(60 s, 10 × `timeoutSeconds`); ' +
        'a client or proxy that gives up sooner finds the outcome on the server (`refreshedAt`, `lastRefreshError`). ' +
        'One discovery of a server runs at a time: a refresh asked for while another of the same server runs is merged ' +
        'into it and answered at once with 202 and the stored list (nothing discovered for it yet); the running one ' +
        'discovers once more when its round ends (at most three rounds in a row), and the outcome shows on the server.',
      tags: ['mcp-servers'],
      auth: MANAGE,
      request: { params: serverParams, query: pageQuery.pick({ limit: true }) },
      responses: {
        200: { description: 'The first page of the server\'s present capabilities, by kind then name', schema: capabilityPage },
        202: { description: 'Merged into a refresh of the server already running, which discovers once more (or superseded by one that took its lease over): the first page of the stored capabilities', schema: capabilityPage },
        503: { description: 'The server could not be reached or answered wrongly (`unavailable`); recorded as its last refresh error' },
      },
      handler: async (ctx) => {
        const response = await catalog().refreshMcpServer(
          { context: requestContextOf(ctx), teamId: teamOf(ctx).id, serverId: ctx.params.serverId, page: { pageSize: ctx.query.limit, cursor: '' } },
          { deadlineMs: REFRESH_DEADLINE_MS },
        );
        return {
          ...(response.coalesced ? { status: 202 } : {}),
          data: response.capabilities.map(presentCapability),
          nextCursor: response.page?.nextCursor || null,
        };
      },
    }),

    defineRoute({
      method: 'get',
      path: '/v1/teams/{team}/mcp-servers/{serverId}/capabilities',
      operationId: 'listCapabilities',
      summary: 'List an MCP server\'s capabilities',
      description: 'Keyset pages by kind (tool, resource, resource template, prompt), then name, then id.',
      tags: ['mcp-servers'],
      auth: READ,
      request: {
        params: serverParams,
        query: pageQuery.extend({ includeGone: z.boolean().default(false).meta({ description: 'Include capabilities gone upstream.' }) }),
      },
      responses: { 200: { description: 'A page of the server\'s capabilities', schema: capabilityPage } },
      handler: async (ctx) => {
        const response = await catalog().listCapabilities({
          teamId: teamOf(ctx).id,
          serverId: ctx.params.serverId,
          includeGone: ctx.query.includeGone,
          page: { pageSize: ctx.query.limit, cursor: ctx.query.cursor ?? '' },
        });
        return { data: response.capabilities.map(presentCapability), nextCursor: response.page?.nextCursor || null };
      },
    }),
  ];
}
