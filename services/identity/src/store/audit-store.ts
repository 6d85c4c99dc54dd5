import { columnNames, type AuditEventData, type Queryable, type Transaction } from '@platform/runtime';

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

/** An audit entry to store: its event id (unique: storing it twice stores it once), when it happened, what it says. */
export interface NewAuditEntry {
  eventId: string;
  occurredAt: string;
  data: AuditEventData;
}

/** An entry's columns with their types, as jsonb_to_recordset reads them. */
const ENTRY_RECORD = `event_id uuid, occurred_at timestamptz, team_id uuid, action text, actor_kind text, actor_user_id uuid, actor jsonb,
  target_type text, target_id text, target_label text, parent jsonb, before jsonb, after jsonb, metadata jsonb,
  request_id text, via jsonb, client_ip text`;
const ENTRY_COLUMNS = columnNames(ENTRY_RECORD);

/**
 * The SQL that stores the entries of the JSON parameter `$parameter` (made by `auditEntriesParameter`) in their
 * order (entry ids ascend with it), skipping event ids stored before. `depends` is for a caller that writes them
 * inside a larger statement (atomic on its own): an entry is stored exactly when the CTE `from` yields a row
 * matching it by `on`, a condition on that row and `r`, the entry (`r.ordinality` counts from 1).
 */
export function auditEntriesInsertSql(parameter: number, depends?: { from: string; on: string }): string {
  const entries = `ROWS FROM (jsonb_to_recordset($${parameter}::jsonb) AS (${ENTRY_RECORD}))
            WITH ORDINALITY AS r`;
  const source = depends ? `${depends.from} JOIN ${entries} ON ${depends.on}` : entries;
  return `INSERT INTO identity.audit_entries (${ENTRY_COLUMNS})
     SELECT ${ENTRY_COLUMNS.replace(/(\w+)/g, 'r.$1')}
       FROM ${source}
      ORDER BY r.ordinality
     ON CONFLICT (event_id) DO NOTHING`;
}

/** The entries as one JSON parameter: one statement text whatever their number, so it is prepared once. */
export function auditEntriesParameter(entries: readonly NewAuditEntry[]): string {
  const rows = entries.map(({ eventId, occurredAt, data }) => ({
    event_id: eventId,
    occurred_at: occurredAt,
    team_id: uuidOrNull(data.teamId),
    action: data.action,
    actor_kind: data.actor.kind,
    actor_user_id: uuidOrNull(data.actor.userId),
    actor: data.actor,
    target_type: data.target.type,
    target_id: data.target.id,
    target_label: data.target.label,
    // JSON null (or an absent key) becomes SQL NULL in jsonb_to_recordset.
    parent: data.parent ? { ...data.parent, exists: true } : null,
    before: data.before ?? null,
    after: data.after ?? null,
    metadata: data.metadata ?? {},
    request_id: data.requestId,
    via: data.via ?? null,
    client_ip: data.clientIp,
  }));
  return JSON.stringify(rows);
}

/**
 * Stores audit entries in one statement, in the given order; returns the new entries' ids by event id. Event ids
 * are unique, so a replayed event inserts nothing and is absent from the result.
 */
export async function insertAuditEntries(tx: Transaction, entries: readonly NewAuditEntry[]): Promise<Map<string, string>> {
  if (entries.length === 0) return new Map();
  const result = await tx.query<{ id: string; event_id: string }>(`${auditEntriesInsertSql(1)} RETURNING id, event_id`, [auditEntriesParameter(entries)], {
    prepared: 'identity_insert_audit_entries',
  });
  return new Map(result.rows.map((row) => [row.event_id, row.id]));
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
