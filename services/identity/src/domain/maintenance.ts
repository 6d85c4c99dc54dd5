import type { Maintenance, SetMaintenanceRequest } from '@platform/proto/gen/platform/identity/v1/identity';
import { AppError, auditContext, MAINTENANCE_CHANNEL } from '@platform/runtime';
import { recordAudit } from './audit';
import { PLATFORM_TEAM_ID, type IdentityDeps } from '../deps';
import { readMaintenance, toMaintenance, updateMaintenance, type MaintenanceRow } from '../store/maintenance-store';

/** The longest reason accepted; it is shown to every user in banners and errors. */
export const MAINTENANCE_REASON_MAX = 1000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function getMaintenance(deps: IdentityDeps): Promise<Maintenance> {
  return toMaintenance(await readMaintenance(deps.db));
}

type Transition = 'start' | 'update' | 'end' | 'none';

function transitionOf(current: MaintenanceRow, enabled: boolean, reason: string, plannedEndAt: string | null): Transition {
  if (!current.enabled) return enabled ? 'start' : 'none';
  if (!enabled) return 'end';
  const currentEnd = current.planned_end_at ? current.planned_end_at.getTime() : null;
  const nextEnd = plannedEndAt ? new Date(plannedEndAt).getTime() : null;
  return current.reason !== reason || currentEnd !== nextEnd ? 'update' : 'none';
}

const summary = (row: { enabled: boolean; reason: string; plannedEndAt: string | null }) => ({
  enabled: row.enabled,
  reason: row.reason,
  plannedEndAt: row.plannedEndAt,
});

/**
 * Turns maintenance mode on, changes its reason or planned end, or turns it off (§2.8, §3): If-Match checked
 * against the setting's revision, a reason required to turn it on, every change audited on the platform team,
 * and every process told through the cache signal once committed. A request that changes nothing (off to off,
 * or on with the same reason and end) answers the current setting and records nothing.
 */
export async function setMaintenance(deps: IdentityDeps, request: SetMaintenanceRequest): Promise<Maintenance> {
  const reason = request.enabled ? request.reason.trim() : '';
  if (request.enabled && reason === '') {
    throw AppError.invalid('A reason is required to turn maintenance mode on', [{ field: 'reason', problem: 'is required to turn maintenance on' }]);
  }
  if (reason.length > MAINTENANCE_REASON_MAX) {
    throw AppError.invalid('The reason is too long', [{ field: 'reason', problem: `at most ${MAINTENANCE_REASON_MAX} characters` }]);
  }
  const plannedEndAt = request.enabled && request.plannedEndAt ? request.plannedEndAt : null;
  const actorId = request.context?.actor?.userId;
  const updatedBy = actorId && UUID.test(actorId) ? actorId : null;

  const { changed, state } = await deps.db.transaction(async (tx) => {
    const current = await readMaintenance(tx, { lock: true });
    if (current.revision !== request.expectedRevision) {
      throw new AppError('precondition_failed', 'The maintenance setting has changed; read it again and retry');
    }
    const transition = transitionOf(current, request.enabled, reason, plannedEndAt);
    if (transition === 'none') return { changed: false, state: toMaintenance(current) };

    const next = { enabled: request.enabled, reason, plannedEndAt };
    const started = transition === 'start' ? 'now' : transition === 'end' ? 'clear' : 'keep';
    if (!(await updateMaintenance(tx, current.revision, { ...next, started, updatedBy }))) {
      throw new AppError('precondition_failed', 'The maintenance setting has changed; read it again and retry');
    }
    await recordAudit(tx, {
      ...auditContext(request.context),
      teamId: PLATFORM_TEAM_ID,
      action: `platform.maintenance_${transition}`,
      target: { type: 'maintenance', id: 'maintenance', label: 'Maintenance mode' },
      before: summary({ enabled: current.enabled, reason: current.reason, plannedEndAt: current.planned_end_at?.toISOString() ?? null }),
      after: summary(next),
    });
    return { changed: true, state: toMaintenance(await readMaintenance(tx)) };
  });

  if (changed) await announce(deps, state);
  return state;
}

/** Tells every process at once; a lost signal is caught up by each process's periodic re-read. */
async function announce(deps: IdentityDeps, state: Maintenance): Promise<void> {
  try {
    await deps.cache.publish(MAINTENANCE_CHANNEL, JSON.stringify(state));
  } catch (error) {
    deps.logger.warn({ err: error }, 'could not signal the maintenance change; processes will re-read it');
  }
}
