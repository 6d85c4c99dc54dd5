import type { AuditEventData, Queryable, Transaction } from '@platform/runtime';

/** An `identity.audit_entries` row with the team's current name and slug joined in. */
export interface AuditEntryRow {
  id: string;
  event_id: string;
  occurred_at: Date;
  team_id: string | null;
  team_name: string | null;
  team_slug: string | null;
  action: string;
  actor_kind: string;
  actor_user_id: string | null;
  actor: Record<string, unknown>;
  target_type: string;
  target_id: string;
  target_label: string;
  target_exists: boolean;
  parent: Record<string, unknown> | null;
  before: unknown;
  after: unknown;
  metadata: Record<string, unknown>;
  request_id: string;
  via: { kind: string; name: string } | null;
  client_ip: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const uuidOrNull = (value: string | null | undefined): string | null => (value && UUID.test(value) ? value : null);
/** jsonb parameters: `null` stays SQL NULL rather than the JSON value `null`. */
const jsonOrNull = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value));

/** Stores one audit event; returns the new entry's id. The event id is unique, so a replay inserts nothing. */
export async function insertAuditEntry(
  tx: Transaction,
  entry: { eventId: string; occurredAt: string; data: AuditEventData },
): Promise<string | null> {
  const { data } = entry;
  const result = await tx.query<{ id: string }>(
    `INSERT INTO identity.audit_entries
       (event_id, occurred_at, team_id, action, actor_kind, actor_user_id, actor, target_type, target_id, target_label,
        parent, before, after, metadata, request_id, via, client_ip)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11::jsonb, $12::jsonb, $13::jsonb, $14::jsonb, $15, $16::jsonb, $17)
     ON CONFLICT (event_id) DO NOTHING
     RETURNING id`,
    [
      entry.eventId,
      entry.occurredAt,
      uuidOrNull(data.teamId),
      data.action,
      data.actor.kind,
      uuidOrNull(data.actor.userId),
      JSON.stringify(data.actor),
      data.target.type,
      data.target.id,
      data.target.label,
      data.parent ? JSON.stringify({ ...data.parent, exists: true }) : null,
      jsonOrNull(data.before),
      jsonOrNull(data.after),
      JSON.stringify(data.metadata ?? {}),
      data.requestId,
      jsonOrNull(data.via),
      data.clientIp,
    ],
  );
  return result.rows[0]?.id ?? null;
}

/**
 * Records that a target is gone: entries up to `uptoId` naming it as their target, or as their parent, show
 * it as no longer existing.
 */
export async function markTargetGone(tx: Transaction, target: { type: string; id: string }, uptoId: string): Promise<void> {
  await tx.query(
    `UPDATE identity.audit_entries SET target_exists = false
     WHERE target_type = $1 AND target_id = $2 AND id <= $3 AND target_exists`,
    [target.type, target.id, uptoId],
  );
  await tx.query(
    `UPDATE identity.audit_entries SET parent = jsonb_set(parent, '{exists}', 'false'::jsonb)
     WHERE parent->>'type' = $1 AND parent->>'id' = $2 AND id <= $3 AND (parent->>'exists')::boolean IS DISTINCT FROM false`,
    [target.type, target.id, uptoId],
  );
}

export interface AuditFilter {
  teamId: string;
  /** Exact action, or a prefix when it ends with '.'. */
  action?: string;
  actorId?: string;
  targetType?: string;
  targetId?: string;
  from?: string;
  to?: string;
  excludeCosts: boolean;
  /** Entries with an id below this one (the cursor). */
  beforeId?: string;
  limit: number;
}

const SELECT_ENTRY = `
  SELECT e.*, t.name AS team_name, t.slug AS team_slug
  FROM identity.audit_entries e
  LEFT JOIN identity.teams t ON t.id = e.team_id`;

const escapeLike = (value: string): string => value.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A page of a team's entries, newest first. */
export async function listAuditEntries(db: Queryable, filter: AuditFilter): Promise<AuditEntryRow[]> {
  const params: unknown[] = [filter.teamId];
  const where = ['e.team_id = $1'];
  const add = (clause: (n: string) => string, value: unknown): void => {
    params.push(value);
    where.push(clause(`$${params.length}`));
  };
  if (filter.action) {
    if (filter.action.endsWith('.')) add((n) => `e.action LIKE ${n}`, `${escapeLike(filter.action)}%`);
    else add((n) => `e.action = ${n}`, filter.action);
  }
  if (filter.actorId) add((n) => `e.actor_user_id = ${n}`, filter.actorId);
  if (filter.targetType) add((n) => `e.target_type = ${n}`, filter.targetType);
  if (filter.targetId) add((n) => `e.target_id = ${n}`, filter.targetId);
  if (filter.from) add((n) => `e.occurred_at >= ${n}`, filter.from);
  if (filter.to) add((n) => `e.occurred_at <= ${n}`, filter.to);
  if (filter.excludeCosts) where.push(`e.action NOT LIKE 'costs.%'`);
  if (filter.beforeId) add((n) => `e.id < ${n}`, filter.beforeId);
  params.push(filter.limit);
  const result = await db.query<AuditEntryRow>(
    `${SELECT_ENTRY} WHERE ${where.join(' AND ')} ORDER BY e.id DESC LIMIT $${params.length}`,
    params,
  );
  return result.rows;
}

export async function findAuditEntry(db: Queryable, teamId: string, entryId: string): Promise<AuditEntryRow | null> {
  const result = await db.query<AuditEntryRow>(`${SELECT_ENTRY} WHERE e.team_id = $1 AND e.id = $2`, [teamId, entryId]);
  return result.rows[0] ?? null;
}
