import { z } from 'zod';
import { teamOf } from '../auth/caller';
import type { RoutePolicy } from '../auth/policy';
import type { EdgeDeps } from '../edge-deps';
import { pageQuery, pageResponse } from '../pagination';
import { CALL_OUTCOMES, callRecordDetailSchema, callRecordSchema, presentCallRecord, presentCallRecordDetail } from '../presenters/call-record';
import { defineRoute, type AnyRouteDefinition } from '../route';
import { teamParam } from '../team-ref';
import { int64IdParam } from '../validation/int64-id';
import { textSchema, timestampSchema } from '../validation/text';

/** Op 6: team owners and admins, and platform staff (any platform role); members and editors get 403. */
const CALL_READERS: RoutePolicy = {
  callers: 'team owners and admins; platform staff',
  team: ['owner', 'admin'],
  platform: ['admin', 'auditor', 'staff'],
};

const callId = int64IdParam('Call record id (int64 >= 1).');

const callsQuery = pageQuery.extend({
  gatewayId: z.uuid().optional().meta({ description: 'Only calls through this gateway.' }),
  serverId: z.uuid().optional().meta({ description: 'Only calls that reached this MCP server.' }),
  outcome: z.enum(CALL_OUTCOMES).optional(),
  method: textSchema().min(1).max(200).optional().meta({ description: 'Only this MCP method, for example `tools/call`.' }),
  userId: z.uuid().optional().meta({ description: 'Only calls made by (or on behalf of) this person.' }),
  since: timestampSchema().optional().meta({ description: 'Calls at or after this time (years 0001 to 9999).' }),
  until: timestampSchema().optional().meta({ description: 'Calls at or before this time (years 0001 to 9999).' }),
});

/** Records of the calls made through a team's gateways (§2.9, op 6); stored by the catalog from `mcp-calls.v1`. */
export function callRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  // Read at request time: the route catalogue builds routes without clients.
  const catalog = () => deps.clients.catalog;
  return [
    defineRoute({
      method: 'get',
      path: '/v1/teams/{team}/calls',
      operationId: 'listCalls',
      summary: "List the calls made through a team's gateways",
      description:
        'Newest first by the time of the call. Records arrive a moment after the call (they travel through the event bus); one that arrives late takes its place by time. Payloads are shown only on the single call.',
      tags: ['calls'],
      auth: CALL_READERS,
      request: { params: z.object({ team: teamParam }), query: callsQuery },
      responses: { 200: { description: 'A page of call records', schema: pageResponse(callRecordSchema) } },
      handler: async (ctx) => {
        const { query } = ctx;
        const answer = await catalog().listCalls({
          teamId: teamOf(ctx).id,
          page: { pageSize: query.limit, cursor: query.cursor ?? '' },
          gatewayId: query.gatewayId ?? '',
          serverId: query.serverId ?? '',
          outcome: query.outcome ?? '',
          method: query.method ?? '',
          userId: query.userId ?? '',
          ...(query.since ? { since: new Date(query.since).toISOString() } : {}),
          ...(query.until ? { until: new Date(query.until).toISOString() } : {}),
        });
        return { data: answer.calls.map(presentCallRecord), nextCursor: answer.page?.nextCursor || null };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/teams/{team}/calls/{callId}',
      operationId: 'getCall',
      summary: 'Read one call made through a team\'s gateways',
      description: 'With its payloads when the server captures them. A call not in the team\'s call list is 404 `call_not_found`.',
      tags: ['calls'],
      auth: CALL_READERS,
      request: { params: z.object({ team: teamParam, callId }) },
      responses: {
        200: { description: 'The call record', schema: callRecordDetailSchema },
        404: { description: 'No such call in this team (`call_not_found`)' },
      },
      handler: async (ctx) => {
        const call = await catalog().getCall({ teamId: teamOf(ctx).id, callId: ctx.params.callId });
        return { data: presentCallRecordDetail(call) };
      },
    }),
  ];
}
