import { z } from 'zod';
import { MCP_SERVER_MANAGERS, TEAM_MEMBERS_AND_PLATFORM_STAFF } from '../auth/policy';
import { requestContextOf, teamOf } from '../auth/caller';
import { MAX_SERVER_TIMEOUT_SECONDS } from '../catalog-limits';
import type { EdgeDeps } from '../edge-deps';
import { pageQuery, pageResponse } from '../pagination';
import { slugSchema } from '../slug';
import { mcpServerSchema, presentMcpServer } from '../presenters/mcp-server';
import { defineRoute, type AnyRouteDefinition } from '../route';
import { teamParam } from '../team-ref';

const MANAGE = MCP_SERVER_MANAGERS;
const READ = TEAM_MEMBERS_AND_PLATFORM_STAFF;

const slug = slugSchema({ description: 'Unique within the team.', example: 'search' });
const fields = {
  name: z.string().trim().min(1).max(100),
  description: z.string().max(2000),
  url: z.string().min(1).max(2048).meta({
    description: 'Passes the address guard when saved (422 `address_not_allowed`): https, or http only to a host inside ALLOWED_INTERNAL_NETWORKS.',
    example: 'https://mcp.example.com/mcp',
  }),
  transport: z.enum(['streamable-http', 'sse']),
  // Its rules (an HTTP token, none the transport sets) are the catalog's, shared with op 16's `headers`.
  authHeaderName: z.string().min(1).max(100).meta({
    description:
      'Default `Authorization` when `authValue` is given. An HTTP header name, not one the MCP transport sets (`Host`, `Connection`, ' +
      '`Content-Type`, `Content-Length`, `Transfer-Encoding`, `Accept`, `Mcp-Session-Id`, `MCP-Protocol-Version`, `Last-Event-ID`, ' +
      'other hop-by-hop ones): 400 `invalid_request` naming `authHeaderName`, as op 16 refuses them in `headers`.',
  }),
  timeoutSeconds: z.number().int().min(1).max(MAX_SERVER_TIMEOUT_SECONDS),
  enabled: z.boolean(),
  sendIdentity: z.boolean(),
  capturePayloads: z.boolean(),
};
const serverParams = z.object({ team: teamParam, serverId: z.uuid().meta({ description: 'MCP server id.' }) });

/** A team's MCP servers (the catalog service's): registering, reading, changing and deleting the records. */
export function mcpServerRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  // Read at request time: the route catalogue builds routes without clients.
  const catalog = () => deps.clients.catalog;

  return [
    defineRoute({
      method: 'post',
      path: '/v1/teams/{team}/mcp-servers',
      operationId: 'createMcpServer',
      summary: 'Register an MCP server',
      description:
        'The credential (`authValue`) is stored encrypted and never returned: `hasAuth` and `authValueHint` show it. ' +
        'Audited as `mcp_server.create` (without the credential).',
      tags: ['mcp-servers'],
      auth: MANAGE,
      request: {
        params: z.object({ team: teamParam }),
        body: z.object({
          name: fields.name,
          slug,
          url: fields.url,
          description: fields.description.default(''),
          transport: fields.transport.default('streamable-http'),
          authHeaderName: fields.authHeaderName.optional(),
          authValue: z.string().min(1).max(8192).optional().meta({ description: 'Write-only credential sent upstream in `authHeaderName`.' }),
          timeoutSeconds: fields.timeoutSeconds.default(30),
          enabled: fields.enabled.default(true),
          sendIdentity: fields.sendIdentity.default(false),
          capturePayloads: fields.capturePayloads.default(false),
        }),
      },
      responses: {
        201: { description: 'The new server', schema: mcpServerSchema, etag: true },
        409: { description: 'The slug is taken in the team (`conflict`), or the team is archived (`team_archived`)' },
        422: { description: 'The URL is refused by the address guard (`address_not_allowed`)' },
      },
      handler: async (ctx) => {
        const team = teamOf(ctx);
        const { authHeaderName, authValue, ...rest } = ctx.body;
        const server = await catalog().createMcpServer({
          context: requestContextOf(ctx),
          teamId: team.id,
          ...rest,
          authHeaderName: authHeaderName ?? '',
          authValue: authValue ?? '',
        });
        const data = presentMcpServer(server, team);
        return { status: 201, data, revision: data.revision };
      },
    }),

    defineRoute({
      method: 'get',
      path: '/v1/teams/{team}/mcp-servers',
      operationId: 'listMcpServers',
      summary: 'List a team\'s MCP servers',
      tags: ['mcp-servers'],
      auth: READ,
      request: { params: z.object({ team: teamParam }), query: pageQuery },
      responses: { 200: { description: 'A page of the team\'s servers, by slug', schema: pageResponse(mcpServerSchema) } },
      handler: async (ctx) => {
        const team = teamOf(ctx);
        const response = await catalog().listMcpServers({ teamId: team.id, page: { pageSize: ctx.query.limit, cursor: ctx.query.cursor ?? '' } });
        return { data: response.servers.map((server) => presentMcpServer(server, team)), nextCursor: response.page?.nextCursor || null };
      },
    }),

    defineRoute({
      method: 'get',
      path: '/v1/teams/{team}/mcp-servers/{serverId}',
      operationId: 'getMcpServer',
      summary: 'Read an MCP server',
      tags: ['mcp-servers'],
      auth: READ,
      request: { params: serverParams },
      responses: { 200: { description: 'The server', schema: mcpServerSchema, etag: true } },
      handler: async (ctx) => {
        const team = teamOf(ctx);
        const data = presentMcpServer(await catalog().getMcpServer({ teamId: team.id, serverId: ctx.params.serverId }), team);
        return { data, revision: data.revision };
      },
    }),

    defineRoute({
      method: 'patch',
      path: '/v1/teams/{team}/mcp-servers/{serverId}',
      operationId: 'updateMcpServer',
      summary: 'Change an MCP server',
      description:
        'Any field; absent fields are unchanged. `authValue` absent keeps the stored credential, `""` removes it. ' +
        'A changed URL passes the address guard again. Audited as `mcp_server.update` (`authValueChanged` instead of the credential).',
      tags: ['mcp-servers'],
      auth: MANAGE,
      request: {
        params: serverParams,
        headers: { ifMatch: true },
        body: z.object({
          name: fields.name.optional(),
          slug: slug.optional(),
          url: fields.url.optional(),
          description: fields.description.optional(),
          transport: fields.transport.optional(),
          authHeaderName: fields.authHeaderName.optional(),
          authValue: z.string().max(8192).optional().meta({ description: 'A new credential; `""` removes it.' }),
          timeoutSeconds: fields.timeoutSeconds.optional(),
          enabled: fields.enabled.optional(),
          sendIdentity: fields.sendIdentity.optional(),
          capturePayloads: fields.capturePayloads.optional(),
        }),
      },
      responses: {
        200: { description: 'The changed server', schema: mcpServerSchema, etag: true },
        409: { description: 'The slug is taken in the team (`conflict`), or the team is archived (`team_archived`)' },
        422: { description: 'The URL is refused by the address guard (`address_not_allowed`)' },
      },
      handler: async (ctx) => {
        const team = teamOf(ctx);
        const server = await catalog().updateMcpServer({
          context: requestContextOf(ctx),
          teamId: team.id,
          serverId: ctx.params.serverId,
          expectedRevision: String(ctx.ifMatch),
          ...ctx.body,
        });
        const data = presentMcpServer(server, team);
        return { data, revision: data.revision };
      },
    }),

    defineRoute({
      method: 'delete',
      path: '/v1/teams/{team}/mcp-servers/{serverId}',
      operationId: 'deleteMcpServer',
      summary: 'Delete an MCP server',
      description: 'Audited as `mcp_server.delete`.',
      tags: ['mcp-servers'],
      auth: MANAGE,
      request: { params: serverParams },
      responses: { 204: { description: 'Deleted' } },
      handler: async (ctx) => {
        await catalog().deleteMcpServer({ context: requestContextOf(ctx), teamId: teamOf(ctx).id, serverId: ctx.params.serverId });
        return { status: 204 };
      },
    }),
  ];
}
