import { z } from 'zod';
import { callerOf, requestContextOf } from '../auth/caller';
import type { EdgeDeps } from '../edge-deps';
import { pageQuery, pageResponse } from '../pagination';
import { uuid } from '../presenters/common';
import { connectionSchema, presentConnection } from '../presenters/connection';
import { defineRoute, type AnyRouteDefinition } from '../route';

const connectionParams = z.object({ connectionId: uuid });
const personParams = z.object({ personId: uuid });
const personConnectionParams = z.object({ personId: uuid, connectionId: uuid });

/** The connected apps of a person (their OAuth connections to gateways): their own, or any person's for admins. */
export function connectionRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  const identity = () => deps.clients.identity;
  const list = async (personId: string, query: { limit: number; cursor?: string | undefined }) => {
    const listed = await identity().listConnections({ personId, page: { pageSize: query.limit, cursor: query.cursor ?? '' } });
    return { data: listed.connections.map(presentConnection), nextCursor: listed.page?.nextCursor || null };
  };
  return [
    defineRoute({
      method: 'get',
      path: '/v1/me/connections',
      operationId: 'listMyConnections',
      summary: 'List your connected apps (OAuth connections to gateways)',
      tags: ['oauth'],
      auth: { callers: 'signed-in people (browser session)' },
      request: { query: pageQuery },
      responses: { 200: { description: 'A page of your connections, newest first', schema: pageResponse(connectionSchema) } },
      handler: async (ctx) => list(callerOf(ctx).personId ?? '', ctx.query),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/me/connections/{connectionId}',
      operationId: 'revokeMyConnection',
      summary: 'Disconnect one of your connected apps',
      description: 'Ends the connection and every token issued under it at once. Audited as `oauth.revoke`.',
      tags: ['oauth'],
      auth: { callers: 'signed-in people (browser session)' },
      request: { params: connectionParams },
      responses: { 204: { description: 'Disconnected' }, 404: { description: 'No such connection of yours' } },
      handler: async (ctx) => {
        await identity().revokeConnection({ context: requestContextOf(ctx), personId: callerOf(ctx).personId ?? '', connectionId: ctx.params.connectionId });
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/admin/people/{personId}/connections',
      operationId: 'listPersonConnections',
      summary: "List a person's connected apps",
      tags: ['oauth'],
      auth: { callers: 'platform admins and auditors', platform: ['admin', 'auditor'] },
      request: { params: personParams, query: pageQuery },
      responses: { 200: { description: "A page of the person's connections, newest first", schema: pageResponse(connectionSchema) } },
      handler: async (ctx) => list(ctx.params.personId, ctx.query),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/admin/people/{personId}/connections/{connectionId}',
      operationId: 'revokePersonConnection',
      summary: "Disconnect one of a person's connected apps",
      description: 'Ends the connection and every token issued under it at once. Audited as `oauth.revoke`.',
      tags: ['oauth'],
      auth: { callers: 'platform admins', platform: ['admin'] },
      request: { params: personConnectionParams },
      responses: { 204: { description: 'Disconnected' }, 404: { description: 'No such connection of this person' } },
      handler: async (ctx) => {
        await identity().revokeConnection({ context: requestContextOf(ctx), personId: ctx.params.personId, connectionId: ctx.params.connectionId });
        return { status: 204 };
      },
    }),
  ];
}
