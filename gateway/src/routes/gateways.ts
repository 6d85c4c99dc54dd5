import { z } from 'zod';
import { TEAM_MEMBERS_AND_PLATFORM_STAFF } from '../auth/policy';
import { requestContextOf, teamOf } from '../auth/caller';
import type { EdgeDeps } from '../edge-deps';
import { pageQuery, pageResponse } from '../pagination';
import { slugSchema } from '../slug';
import { gatewaySchema, presentGateway } from '../presenters/gateway';
import { defineRoute, type AnyRouteDefinition } from '../route';
import { teamParam } from '../team-ref';

const MANAGE = { callers: 'team owners and admins; platform admins', team: ['owner', 'admin'], platform: ['admin'] } as const;
const READ = TEAM_MEMBERS_AND_PLATFORM_STAFF;

const slug = slugSchema({ description: 'Unique across the installation; the gateway is served at `{APP_URL}/mcp/{slug}`.', example: 'tools' });
const name = z.string().trim().min(1).max(100);

/** Gateways of a team (the catalog service's). Sessions only (the policy's default). */
export function gatewayRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  // Read at request time: the route catalogue builds routes without clients.
  const catalog = () => deps.clients.catalog;
  const present = (gateway: Parameters<typeof presentGateway>[0]) => presentGateway(gateway, deps.settings.appUrl);

  return [
    defineRoute({
      method: 'post',
      path: '/v1/teams/{team}/gateways',
      operationId: 'createGateway',
      summary: 'Create a gateway',
      description: 'The gateway is served at `{APP_URL}/mcp/{slug}`; slugs are unique across the installation.',
      tags: ['gateways'],
      auth: MANAGE,
      request: {
        params: z.object({ team: teamParam }),
        body: z.object({ slug, name, enabled: z.boolean().default(true) }),
      },
      responses: {
        201: { description: 'The new gateway', schema: gatewaySchema, etag: true },
        409: { description: 'The slug is taken (`conflict`), or the team is archived (`team_archived`)' },
      },
      handler: async (ctx) => {
        const gateway = await catalog().createGateway({
          context: requestContextOf(ctx),
          teamId: teamOf(ctx).id,
          slug: ctx.body.slug,
          name: ctx.body.name,
          enabled: ctx.body.enabled,
          servers: [],
        });
        const data = present(gateway);
        return { status: 201, data, revision: data.revision };
      },
    }),

    defineRoute({
      method: 'get',
      path: '/v1/teams/{team}/gateways',
      operationId: 'listGateways',
      summary: 'List a team\'s gateways',
      tags: ['gateways'],
      auth: READ,
      request: { params: z.object({ team: teamParam }), query: pageQuery },
      responses: { 200: { description: 'A page of the team\'s gateways, by slug', schema: pageResponse(gatewaySchema) } },
      handler: async (ctx) => {
        const response = await catalog().listGateways({
          teamId: teamOf(ctx).id,
          page: { pageSize: ctx.query.limit, cursor: ctx.query.cursor ?? '' },
        });
        return { data: response.gateways.map(present), nextCursor: response.page?.nextCursor || null };
      },
    }),

    defineRoute({
      method: 'get',
      path: '/v1/teams/{team}/gateways/{gatewayId}',
      operationId: 'getGateway',
      summary: 'Read a gateway',
      description: '`gatewayId` is the gateway\'s id or its slug.',
      tags: ['gateways'],
      auth: READ,
      request: {
        params: z.object({ team: teamParam, gatewayId: z.string().max(100).meta({ description: 'Gateway id (uuid) or slug.' }) }),
      },
      responses: { 200: { description: 'The gateway', schema: gatewaySchema, etag: true } },
      handler: async (ctx) => {
        const data = present(await catalog().getGateway({ teamId: teamOf(ctx).id, gatewayRef: ctx.params.gatewayId }));
        return { data, revision: data.revision };
      },
    }),
  ];
}
