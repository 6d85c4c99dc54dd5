import { z } from 'zod';
import type { McpServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { AppError } from '@platform/runtime';
import { requestContextOf } from '../auth/caller';
import type { RoutePolicy } from '../auth/policy';
import type { EdgeDeps } from '../edge-deps';
import { pageQuery, pageResponse } from '../pagination';
import { adminMcpServerSchema, presentAdminMcpServer, teamIdsOf, type AdminMcpServerJson } from '../presenters/admin-mcp-server';
import { uuid } from '../presenters/common';
import { defineRoute, type AnyRouteDefinition } from '../route';
import { teamDirectory, teamsById } from '../team-directory';
import { parseTeamRef, teamParam } from '../team-ref';

const READ: RoutePolicy = { callers: 'platform staff', platform: ['admin', 'auditor', 'staff'] };
const MANAGE: RoutePolicy = { callers: 'platform admins', platform: ['admin'] };
const serverParams = z.object({ serverId: uuid.meta({ description: 'MCP server id.' }) });

/** The body of op 16; the catalog service checks the rules that need the server (team servers, headers, teams). */
const changeBody = z.object({
  name: z.string().trim().min(1).max(100).optional(),
  description: z.string().max(2000).optional(),
  url: z.string().min(1).max(2048).optional().meta({ description: 'Passes the address guard when saved (422 `address_not_allowed`).' }),
  headers: z
    .record(z.string(), z.string())
    .optional()
    .meta({
      description:
        'Static headers sent upstream (at most 20; values at most 8192 characters, 16 KiB in all). Replaces all headers and the ' +
        'credential header of the team API; `{}` removes them. Write-only: never returned, logged or audited.',
    }),
  accessMode: z.enum(['proxy', 'direct']).optional(),
  visibility: z.enum(['all', 'teams']).optional(),
  personal: z.boolean().optional().meta({ description: 'Offer the server in every personal workspace; visibility `all` reaches the other teams only.' }),
  teams: z
    .array(z.string().min(1).max(63))
    .max(100)
    .optional()
    .meta({ description: 'Team slugs or ids the server is offered to (with visibility `teams`); replaces the list. Unknown teams are a 400.' }),
  enabled: z.boolean().optional(),
});

/**
 * The platform admin view of every team's MCP servers (spec §2.4) and op 16. Team names come from identity, one
 * lookup per distinct team per request.
 */
export function adminMcpServerRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  // Read at request time: the route catalogue builds routes without clients.
  const catalog = () => deps.clients.catalog;

  async function present(servers: readonly McpServer[]): Promise<AdminMcpServerJson[]> {
    const teams = await teamsById(teamDirectory(deps.clients), teamIdsOf(servers));
    return servers.map((server) => presentAdminMcpServer(server, teams));
  }

  async function readOne(serverId: string): Promise<McpServer> {
    const { servers } = await catalog().listAllMcpServers({ serverId, teamId: '', page: { pageSize: 1, cursor: '' } });
    if (!servers[0]) throw AppError.notFound('MCP server');
    return servers[0];
  }

  /** The `team` filter (slug or id) as a team id; an unknown team is a 400 naming the filter. */
  async function teamFilter(ref: string | undefined): Promise<string> {
    if (ref === undefined) return '';
    const unknown = () => AppError.invalid('No such team', [{ field: 'team', problem: 'no such team' }]);
    try {
      parseTeamRef(ref);
      return (await deps.clients.identity.getTeam({ teamRef: ref })).id;
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') throw unknown();
      throw error;
    }
  }

  return [
    defineRoute({
      method: 'get',
      path: '/v1/admin/mcp-servers',
      operationId: 'listAllMcpServers',
      summary: "List every team's MCP servers",
      description: 'Platform servers (owned by the platform team) and teams\' own servers, by slug then id.',
      tags: ['admin-mcp-servers'],
      auth: READ,
      request: { query: pageQuery.extend({ team: teamParam.optional().meta({ description: 'Only this team\'s servers (slug or id).' }) }) },
      responses: { 200: { description: 'A page of servers', schema: pageResponse(adminMcpServerSchema) } },
      handler: async (ctx) => {
        const teamId = await teamFilter(ctx.query.team);
        const response = await catalog().listAllMcpServers({ teamId, serverId: '', page: { pageSize: ctx.query.limit, cursor: ctx.query.cursor ?? '' } });
        return { data: await present(response.servers), nextCursor: response.page?.nextCursor || null };
      },
    }),

    defineRoute({
      method: 'get',
      path: '/v1/admin/mcp-servers/{serverId}',
      operationId: 'getAdminMcpServer',
      summary: 'Read any MCP server (admin view)',
      tags: ['admin-mcp-servers'],
      auth: READ,
      request: { params: serverParams },
      responses: { 200: { description: 'The server', schema: adminMcpServerSchema, etag: true } },
      handler: async (ctx) => {
        const [data] = await present([await readOne(ctx.params.serverId)]);
        return { data: data!, revision: data!.revision };
      },
    }),

    defineRoute({
      method: 'patch',
      path: '/v1/admin/mcp-servers/{serverId}',
      operationId: 'adminUpdateMcpServer',
      summary: 'Change any MCP server (op 16)',
      description:
        "Absent fields are unchanged. A team's own server stays proxy-only and visible to its team only: `visibility`, " +
        '`personal: true`, `accessMode: "direct"` or other teams answer 400 `team_mcp_visibility`. Audited as ' +
        '`mcp_server.admin_update` (the changed field names, never header values).',
      tags: ['admin-mcp-servers'],
      auth: MANAGE,
      request: { params: serverParams, headers: { ifMatch: true }, body: changeBody },
      responses: {
        200: { description: 'The changed server', schema: adminMcpServerSchema, etag: true },
        400: { description: 'Invalid fields, unknown teams (`invalid_request`), or a team server offered beyond its team (`team_mcp_visibility`)' },
        422: { description: 'The URL is refused by the address guard (`address_not_allowed`)' },
      },
      handler: async (ctx) => {
        const { headers, teams, ...rest } = ctx.body;
        const server = await catalog().adminUpdateMcpServer({
          context: requestContextOf(ctx),
          serverId: ctx.params.serverId,
          expectedRevision: String(ctx.ifMatch),
          ...rest,
          replaceHeaders: headers !== undefined,
          headers: headers ?? {},
          replaceTeams: teams !== undefined,
          visibleTeamIds: teams ?? [],
        });
        const [data] = await present([server]);
        return { data: data!, revision: data!.revision };
      },
    }),
  ];
}
