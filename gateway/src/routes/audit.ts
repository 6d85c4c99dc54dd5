import { z } from 'zod';
import { decodeCursor, encodeCursor } from '@platform/runtime';
import type { EdgeDeps } from '../edge-deps';
import { callerOf, teamOf } from '../auth/caller';
import type { RoutePolicy } from '../auth/policy';
import { pageQuery, pageResponse } from '../pagination';
import { auditEntrySchema, presentAuditEntry } from '../presenters/audit-entry';
import { defineRoute, type AnyRouteDefinition } from '../route';
import { teamParam } from '../team-ref';
import { int64IdParam } from '../validation/int64-id';
import { timestampSchema } from '../validation/text';

/** Op 12: team owners, admins and editors, and platform admins and auditors (who read every team's log). */
const AUDIT_READERS: RoutePolicy = {
  callers: 'team owners, admins and editors (editors never see `costs.*` entries); platform admins and auditors',
  team: ['owner', 'admin', 'editor'],
  platform: ['admin', 'auditor'],
};

/** Cost entries are "not found" for editors (§4.2 op 12); a platform admin or auditor sees them whatever their team role. */
function hidesCosts(ctx: { auth: unknown }): boolean {
  const caller = callerOf(ctx);
  const platformReader = caller.platformRole === 'admin' || caller.platformRole === 'auditor';
  return !platformReader && caller.team?.role === 'editor';
}

const entryId = int64IdParam('Audit entry id (int64 >= 1).');

const auditQuery = pageQuery.extend({
  action: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: 'An exact action (`team.member_add`), or a prefix ending in "." (`team.`).' }),
  actorId: z.uuid().optional().meta({ description: 'Only entries by this person.' }),
  targetType: z.string().min(1).max(100).optional(),
  targetId: z.string().min(1).max(200).optional(),
  // Years 0001 to 9999 in UTC (timestampSchema): a bound outside them would fail the query as a 500.
  from: timestampSchema().optional().meta({ description: 'Entries at or after this time (years 0001 to 9999).' }),
  to: timestampSchema().optional().meta({ description: 'Entries at or before this time (years 0001 to 9999).' }),
});

// The service's cursor is the last entry id; the edge wraps it so clients treat it as opaque.
const cursorPosition = z.object({ before: z.string().regex(/^[1-9]\d{0,18}$/) });

export function auditRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  const identity = () => deps.clients.identity;
  return [
    defineRoute({
      method: 'get',
      path: '/v1/teams/{team}/audit',
      operationId: 'listAuditEntries',
      summary: "List a team's audit entries",
      description:
        'Newest first. Platform-level actions (maintenance, people) are in the platform team: `/v1/teams/platform/audit`.',
      tags: ['audit'],
      auth: AUDIT_READERS,
      request: { params: z.object({ team: teamParam }), query: auditQuery },
      responses: { 200: { description: 'A page of audit entries', schema: pageResponse(auditEntrySchema) } },
      handler: async (ctx) => {
        const { query } = ctx;
        const cursor = query.cursor ? decodeCursor(query.cursor, (value) => cursorPosition.safeParse(value).data ?? null).before : '';
        const answer = await identity().listAuditEntries({
          teamId: teamOf(ctx).id,
          page: { pageSize: query.limit, cursor },
          action: query.action ?? '',
          actorId: query.actorId ?? '',
          targetType: query.targetType ?? '',
          targetId: query.targetId ?? '',
          ...(query.from ? { from: new Date(query.from).toISOString() } : {}),
          ...(query.to ? { to: new Date(query.to).toISOString() } : {}),
          excludeCosts: hidesCosts(ctx),
        });
        const next = answer.page?.nextCursor;
        return { data: answer.entries.map(presentAuditEntry), nextCursor: next ? encodeCursor({ before: next }) : null };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/teams/{team}/audit/{entryId}',
      operationId: 'getAuditEntry',
      summary: 'Read one audit entry of a team',
      description: 'Entries whose action begins `costs.` are 404 for team editors.',
      tags: ['audit'],
      auth: AUDIT_READERS,
      request: { params: z.object({ team: teamParam, entryId }) },
      responses: { 200: { description: 'The audit entry', schema: auditEntrySchema }, 404: { description: 'No such entry in this team' } },
      handler: async (ctx) => {
        const entry = await identity().getAuditEntry({ teamId: teamOf(ctx).id, entryId: ctx.params.entryId, excludeCosts: hidesCosts(ctx) });
        return { data: presentAuditEntry(entry) };
      },
    }),
  ];
}
