import type { Maintenance, PersonRef } from '@platform/proto/gen/platform/identity/v1/identity';
import type { Queryable, Transaction } from '@platform/runtime';
import { iso } from './mappers';

/** The one `identity.maintenance` row with the people who started and last changed it. */
export interface MaintenanceRow {
  enabled: boolean;
  reason: string;
  planned_end_at: Date | null;
  started_at: Date | null;
  started_by: string | null;
  started_by_name: string | null;
  started_by_email: string | null;
  updated_by: string | null;
  updated_by_name: string | null;
  updated_by_email: string | null;
  updated_at: Date;
  revision: string;
}

const SELECT_MAINTENANCE = `
  SELECT m.enabled, m.reason, m.planned_end_at, m.started_at, m.updated_at, m.revision,
         m.started_by, s.display_name AS started_by_name, s.email AS started_by_email,
         m.updated_by, u.display_name AS updated_by_name, u.email AS updated_by_email
  FROM identity.maintenance m
  LEFT JOIN identity.people s ON s.id = m.started_by
  LEFT JOIN identity.people u ON u.id = m.updated_by
  WHERE m.id = 1`;

export async function readMaintenance(db: Queryable, options: { lock?: boolean } = {}): Promise<MaintenanceRow> {
  // FOR UPDATE cannot lock the nullable side of an outer join; name the row being changed.
  const result = await db.query<MaintenanceRow>(`${SELECT_MAINTENANCE}${options.lock ? ' FOR UPDATE OF m' : ''}`);
  const row = result.rows[0];
  if (!row) throw new Error('identity.maintenance has no row; migration 0002 inserts it');
  return row;
}

export interface MaintenanceChange {
  enabled: boolean;
  reason: string;
  plannedEndAt: string | null;
  /** Set when maintenance starts; cleared when it ends; kept while it stays on. */
  started: 'now' | 'keep' | 'clear';
  updatedBy: string | null;
}

/** Writes a change if the row is still at `expectedRevision`; false when it is not (a concurrent change won). */
export async function updateMaintenance(tx: Transaction, expectedRevision: string, change: MaintenanceChange): Promise<boolean> {
  const started = {
    now: 'started_at = now(), started_by = $5',
    keep: 'started_at = started_at, started_by = started_by',
    clear: 'started_at = NULL, started_by = NULL',
  }[change.started];
  const result = await tx.query(
    `UPDATE identity.maintenance
     SET enabled = $2, reason = $3, planned_end_at = $4, ${started}, updated_by = $5, updated_at = now(),
         revision = revision + 1
     WHERE id = 1 AND revision = $1`,
    [expectedRevision, change.enabled, change.reason, change.plannedEndAt, change.updatedBy],
  );
  return result.rowCount === 1;
}

function personRef(id: string | null, name: string | null, email: string | null): PersonRef | undefined {
  return id ? { id, displayName: name ?? '', email: email ?? '' } : undefined;
}

export function toMaintenance(row: MaintenanceRow): Maintenance {
  return {
    enabled: row.enabled,
    reason: row.reason,
    plannedEndAt: iso(row.planned_end_at),
    startedAt: iso(row.started_at),
    startedBy: personRef(row.started_by, row.started_by_name, row.started_by_email),
    updatedBy: personRef(row.updated_by, row.updated_by_name, row.updated_by_email),
    updatedAt: iso(row.updated_at),
    revision: row.revision,
  };
}
