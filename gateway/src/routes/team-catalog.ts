import { z } from 'zod';
import { TEAM_MEMBERS_AND_PLATFORM_STAFF } from '../auth/policy';
import { teamOf } from '../auth/caller';
import type { EdgeDeps } from '../edge-deps';
import { pageQuery, pageResponse } from '../pagination';
import { mcpServerSchema, presentMcpServer } from '../presenters/mcp-server';
import { defineRoute, type AnyRouteDefinition } from '../route';
import { teamDirectory, teamsById } from '../team-directory';
import { teamParam } from '../team-ref';

/** A team's catalog: the servers it can put in its gateways now (catalog service, domain/team-catalog.ts). */
export function teamCatalogRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  // Read at request time: the route catalogue builds routes without clients.
  const catalog = () => deps.clients.catalog;

  return [
    defineRoute({
      method: 'get',
      path: '/v1/teams/{team}/catalog',
      operationId: 'listTeamCatalog',
      summary: "List a team's catalog of MCP servers",
      description:
        "The team's own published servers and the published platform servers offered to it (to all teams, to this team, " +
        'or to personal workspaces), enabled ones only, by slug then id. A platform server names the platform team as its team, ' +
        'and shows no credential details.',
      tags: ['mcp-servers'],
      auth: TEAM_MEMBERS_AND_PLATFORM_STAFF,
      request: { params: z.object({ team: teamParam }), query: pageQuery },
      responses: { 200: { description: 'A page of the catalog', schema: pageResponse(mcpServerSchema) } },
      handler: async (ctx) => {
        const team = teamOf(ctx);
        const response = await catalog().listCatalog({ teamId: team.id, page: { pageSize: ctx.query.limit, cursor: ctx.query.cursor ?? '' } });
        const owners = await teamsById(teamDirectory(deps.clients), response.servers.map((server) => server.teamId).filter((id) => id !== team.id));
        owners.set(team.id, team);
        const data = response.servers.map((server) => {
          const presented = presentMcpServer(server, owners.get(server.teamId) ?? { ...team, id: server.teamId, slug: '', name: '' });
          // Another team's (the platform's) server: how it authenticates upstream is not this team's business.
          return server.teamId === team.id ? presented : { ...presented, authHeaderName: null, authValueHint: null };
        });
        return { data, nextCursor: response.page?.nextCursor || null };
      },
    }),
  ];
}
