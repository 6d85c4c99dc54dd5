import { z } from 'zod';
import type { Maintenance } from '@platform/proto/gen/platform/identity/v1/identity';
import type { EdgeDeps } from '../edge-deps';
import { requestContextOf } from '../auth/caller';
import { maintenanceSchema, presentMaintenance } from '../presenters/maintenance';
import { defineRoute, type AnyRouteDefinition } from '../route';
import { timestampSchema } from '../validation/text';

const setMaintenanceBody = z.object({
  enabled: z.boolean(),
  reason: z.string().max(1000).optional().meta({ description: 'Required (non-empty) to turn maintenance on; shown to users.' }),
  // Years 0001 to 9999 in UTC (timestampSchema): an instant past 9999 in UTC would fail the update as a 500.
  plannedEndAt: timestampSchema()
    .nullable()
    .optional()
    .meta({ format: 'date-time', description: 'Informational only; null or omitted clears it.' }),
});

export function maintenanceRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  const identity = () => deps.clients.identity;
  const read = async () => {
    const maintenance = await identity().getMaintenance({});
    return { data: presentMaintenance(maintenance), revision: Number(maintenance.revision) };
  };
  return [
    defineRoute({
      method: 'get',
      path: '/v1/maintenance',
      operationId: 'getMaintenance',
      summary: 'Whether the platform is in maintenance mode',
      tags: ['maintenance'],
      auth: { callers: 'anyone signed in (browser sessions and API keys)', credentials: ['session', 'api_key'] },
      responses: { 200: { description: 'The maintenance setting', schema: maintenanceSchema, etag: true } },
      // Every process already holds the setting (cache signal on change, re-read every few seconds): answer
      // from it, as the spec allows a change to take a few seconds to reach every process.
      handler: async () => {
        const known = deps.maintenance?.snapshot() as Maintenance | undefined;
        if (!known) return read();
        return { data: presentMaintenance(known), revision: Number(known.revision) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/admin/settings/maintenance',
      operationId: 'getMaintenanceSetting',
      summary: 'Read the maintenance setting (with its ETag for a change)',
      tags: ['maintenance'],
      auth: { callers: 'platform admins and auditors', platform: ['admin', 'auditor'] },
      responses: { 200: { description: 'The maintenance setting', schema: maintenanceSchema, etag: true } },
      handler: read,
    }),
    defineRoute({
      method: 'put',
      path: '/v1/admin/settings/maintenance',
      operationId: 'setMaintenance',
      summary: 'Turn maintenance mode on or off, or change its reason or planned end',
      description:
        'While on, new ingestion pauses everywhere; parked work resumes by itself when turned off. Every process ' +
        'sees a change within a few seconds. Audited as `platform.maintenance_start`, `_update` or `_end` (platform team).',
      tags: ['maintenance'],
      auth: { callers: 'platform admins with a browser session', platform: ['admin'] },
      request: { headers: { ifMatch: true }, body: setMaintenanceBody },
      responses: {
        200: { description: 'The maintenance setting after the change', schema: maintenanceSchema },
        400: { description: 'Turning on without a reason (field `reason`), or invalid fields' },
      },
      handler: async (ctx) => {
        const maintenance = await identity().setMaintenance({
          context: requestContextOf(ctx),
          expectedRevision: String(ctx.ifMatch),
          enabled: ctx.body.enabled,
          reason: ctx.body.reason ?? '',
          ...(ctx.body.plannedEndAt ? { plannedEndAt: new Date(ctx.body.plannedEndAt).toISOString() } : {}),
        });
        // This process answers GET /v1/maintenance from its view: it sees its own change now, not when the signal returns.
        deps.maintenance?.learn(maintenance);
        return { data: presentMaintenance(maintenance), revision: Number(maintenance.revision) };
      },
    }),
  ];
}
