import { z } from 'zod';
import { TEAM_MEMBERS_AND_PLATFORM_STAFF } from '../auth/policy';
import { requestContextOf, teamOf } from '../auth/caller';
import type { EdgeDeps } from '../edge-deps';
import { pageQuery, pageResponse } from '../pagination';
import { slugSchema } from '../slug';
import { gatewaySchema, presentGateway } from '../presenters/gateway';
import { defineRoute, type AnyRouteDefinition } from '../route';
import { teamParam } from '../team-ref';
import { textSchema } from '../validation/text';

const MANAGE = { callers: 'team owners and admins; platform admins', team: ['owner', 'admin'], platform: ['admin'] } as const;
const READ = TEAM_MEMBERS_AND_PLATFORM_STAFF;

const slug = slugSchema({ description: 'Unique across the installation; the gateway is served at `{APP_URL}/mcp/{slug}`.', example: 'tools' });
const name = textSchema().trim().min(1).max(100);
const servers = z
  .array(
    z.strictObject({
      serverId: z.uuid().meta({ description: 'An MCP server offered to the team: its own, or a platform server offered to it.' }),
      prefix: textSchema().max(63).optional().meta({
        description:
          'Exposed tool and prompt names are `{prefix}__{name}` (the bare name when empty). Default: the server\'s slug. ' +
          'Empty, or lowercase letters, digits, hyphens and single underscores, starting and ending with a letter or digit.',
        example: 'search',
      }),
    }),
  )
  .max(50)
  .meta({ description: 'The servers the gateway fronts, in order: on a run-time name collision the earlier server wins.' });
const COMPOSITION_ERRORS = {
  400: { description: 'A bad field, or a server not offered to the team (`invalid_request`, naming `servers.N.serverId`)' },
  409: {
    description:
      'The slug is taken (`conflict`); two servers would expose the same tool, prompt or resource name, or share a prefix ' +
      '(`name_collision`, naming them); or the team is archived (`team_archived`)',
  },
};
const gatewayParams = z.object({ team: teamParam, gatewayId: z.string().max(100).meta({ description: 'Gateway id (uuid) or slug.' }) });

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
      description:
        'The gateway is served at `{APP_URL}/mcp/{slug}`; slugs are unique across the installation. ' +
        'Audited as `gateway.create`.',
      tags: ['gateways'],
      auth: MANAGE,
      request: {
        params: z.object({ team: teamParam }),
        body: z.object({ slug, name, enabled: z.boolean().default(true), servers: servers.default([]) }),
      },
      responses: {
        201: { description: 'The new gateway', schema: gatewaySchema, etag: true },
        ...COMPOSITION_ERRORS,
      },
      handler: async (ctx) => {
        const gateway = await catalog().createGateway({
          context: requestContextOf(ctx),
          teamId: teamOf(ctx).id,
          slug: ctx.body.slug,
          name: ctx.body.name,
          enabled: ctx.body.enabled,
          servers: ctx.body.servers,
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
      request: { params: gatewayParams },
      responses: { 200: { description: 'The gateway', schema: gatewaySchema, etag: true } },
      handler: async (ctx) => {
        const data = present(await catalog().getGateway({ teamId: teamOf(ctx).id, gatewayRef: ctx.params.gatewayId }));
        return { data, revision: data.revision };
      },
    }),

    defineRoute({
      method: 'patch',
      path: '/v1/teams/{team}/gateways/{gatewayId}',
      operationId: 'updateGateway',
      summary: 'Change a gateway',
      description:
        'Absent fields are unchanged; `servers` replaces the whole list, checked as on create. ' +
        'Audited as `gateway.update` with the changed fields.',
      tags: ['gateways'],
      auth: MANAGE,
      request: {
        params: gatewayParams,
        headers: { ifMatch: true },
        body: z.object({ slug: slug.optional(), name: name.optional(), enabled: z.boolean().optional(), servers: servers.optional() }),
      },
      responses: {
        200: { description: 'The changed gateway', schema: gatewaySchema, etag: true },
        ...COMPOSITION_ERRORS,
      },
      handler: async (ctx) => {
        const { servers: chosen, ...fields } = ctx.body;
        const gateway = await catalog().updateGateway({
          context: requestContextOf(ctx),
          teamId: teamOf(ctx).id,
          gatewayRef: ctx.params.gatewayId,
          expectedRevision: String(ctx.ifMatch),
          ...fields,
          replaceServers: chosen !== undefined,
          servers: chosen ?? [],
        });
        const data = present(gateway);
        return { data, revision: data.revision };
      },
    }),

    defineRoute({
      method: 'delete',
      path: '/v1/teams/{team}/gateways/{gatewayId}',
      operationId: 'deleteGateway',
      summary: 'Delete a gateway',
      description: 'Its endpoint stops answering at the next request. Audited as `gateway.delete`.',
      tags: ['gateways'],
      auth: MANAGE,
      request: { params: gatewayParams },
      responses: { 204: { description: 'Deleted' } },
      handler: async (ctx) => {
        await catalog().deleteGateway({ context: requestContextOf(ctx), teamId: teamOf(ctx).id, gatewayRef: ctx.params.gatewayId });
        return { status: 204 };
      },
    }),
  ];
}
