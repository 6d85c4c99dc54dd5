import type { Queryable } from '@platform/runtime';

/** A `catalog.call_records` row with whether its gateway and server still exist (computed when read). */
export interface CallRecordRow {
  id: string;
  team_id: string;
  occurred_at: Date;
  method: string;
  exposed_name: string;
  gateway_id: string;
  gateway_slug: string;
  gateway_name: string;
  gateway_exists: boolean;
  server_id: string | null;
  server_slug: string;
  server_name: string;
  server_exists: boolean;
  principal: Record<string, unknown>;
  client_name: string;
  outcome: string;
  error_class: string;
  provider_slug: string;
  latency_ms: number;
  request_bytes: string;
  response_bytes: string;
  request_id: string;
  captured: boolean;
  /** Selected only for a single record (`findCallRecord`); lists leave them out. */
  request_payload?: string | null;
  response_payload?: string | null;
  request_truncated: boolean;
  response_truncated: boolean;
}

export interface NewCallRecord {
  eventId: string;
  teamId: string;
  occurredAt: string;
  method: string;
  exposedName: string;
  gateway: { id: string; slug: string; name: string };
  server: { id: string; slug: string; name: string } | null;
  principal: Record<string, unknown>;
  principalUserId: string | null;
  clientName: string;
  outcome: string;
  errorClass: string;
  providerSlug: string;
  latencyMs: number;
  requestBytes: number;
  responseBytes: number;
  requestId: string;
  payloads: { request: string; response: string; requestTruncated: boolean; responseTruncated: boolean } | null;
}

const INSERT_COLUMNS = `event_id, team_id, occurred_at, method, exposed_name, gateway_id, gateway_slug, gateway_name, server_id,
  server_slug, server_name, principal, principal_user_id, client_name, outcome, error_class, provider_slug, latency_ms,
  request_bytes, response_bytes, request_id, captured, request_payload, response_payload, request_truncated, response_truncated`;
const PARAMS_PER_ROW = 26;
/** Rows per statement: well under Postgres' 65,535 bind parameters. */
const ROWS_PER_STATEMENT = 500;

function paramsOf(record: NewCallRecord): unknown[] {
  return [
    record.eventId,
    record.teamId,
    record.occurredAt,
    record.method,
    record.exposedName,
    record.gateway.id,
    record.gateway.slug,
    record.gateway.name,
    record.server?.id ?? null,
    record.server?.slug ?? '',
    record.server?.name ?? '',
    JSON.stringify(record.principal),
    record.principalUserId,
    record.clientName,
    record.outcome,
    record.errorClass,
    record.providerSlug,
    record.latencyMs,
    record.requestBytes,
    record.responseBytes,
    record.requestId,
    record.payloads !== null,
    record.payloads?.request ?? null,
    record.payloads?.response ?? null,
    record.payloads?.requestTruncated ?? false,
    record.payloads?.responseTruncated ?? false,
  ];
}

/** `($1, …, $26), ($27, …)`: one row of placeholders per record, the principal cast to jsonb. */
function valuesOf(rows: number): string {
  return Array.from({ length: rows }, (_, row) => {
    const at = (column: number) => `$${row * PARAMS_PER_ROW + column + 1}${column === 11 ? '::jsonb' : ''}`;
    return `(${Array.from({ length: PARAMS_PER_ROW }, (_, column) => at(column)).join(', ')})`;
  }).join(',\n');
}

/**
 * Stores records in as few statements as possible; a record whose event was stored before is skipped (event ids
 * are unique). Returns how many were new.
 */
export async function insertCallRecords(db: Queryable, records: readonly NewCallRecord[]): Promise<number> {
  let stored = 0;
  for (let start = 0; start < records.length; start += ROWS_PER_STATEMENT) {
    const chunk = records.slice(start, start + ROWS_PER_STATEMENT);
    const { rowCount } = await db.query(
      `INSERT INTO catalog.call_records (${INSERT_COLUMNS}) VALUES ${valuesOf(chunk.length)} ON CONFLICT (event_id) DO NOTHING`,
      chunk.flatMap(paramsOf),
    );
    stored += rowCount;
  }
  return stored;
}

const COLUMNS = `
  c.id, c.team_id, c.occurred_at, c.method, c.exposed_name, c.gateway_id, c.gateway_slug, c.gateway_name,
  EXISTS (SELECT 1 FROM catalog.gateways g WHERE g.id = c.gateway_id) AS gateway_exists,
  c.server_id, c.server_slug, c.server_name,
  (c.server_id IS NOT NULL AND EXISTS (SELECT 1 FROM catalog.mcp_servers s WHERE s.id = c.server_id)) AS server_exists,
  c.principal, c.client_name, c.outcome, c.error_class, c.provider_slug, c.latency_ms, c.request_bytes, c.response_bytes,
  c.request_id, c.captured, c.request_truncated, c.response_truncated`;

export interface CallFilter {
  teamId: string;
  gatewayId?: string;
  serverId?: string;
  outcome?: string;
  method?: string;
  userId?: string;
  /** Inclusive bounds on occurred_at (ISO 8601). */
  since?: string;
  until?: string;
  /** Records with an id below this one (the cursor). */
  beforeId?: string;
  limit: number;
}

/** A page of a team's records, newest (highest id) first; `limit` rows at most. */
export async function listCallRecords(db: Queryable, filter: CallFilter): Promise<CallRecordRow[]> {
  const params: unknown[] = [filter.teamId];
  const where = ['c.team_id = $1'];
  const add = (column: string, operator: string, value: unknown): void => {
    params.push(value);
    where.push(`${column} ${operator} $${params.length}`);
  };
  if (filter.gatewayId) add('c.gateway_id', '=', filter.gatewayId);
  if (filter.serverId) add('c.server_id', '=', filter.serverId);
  if (filter.outcome) add('c.outcome', '=', filter.outcome);
  if (filter.method) add('c.method', '=', filter.method);
  if (filter.userId) add('c.principal_user_id', '=', filter.userId);
  if (filter.since) add('c.occurred_at', '>=', filter.since);
  if (filter.until) add('c.occurred_at', '<=', filter.until);
  if (filter.beforeId) add('c.id', '<', filter.beforeId);
  params.push(filter.limit);
  const { rows } = await db.query<CallRecordRow>(
    `SELECT ${COLUMNS} FROM catalog.call_records c WHERE ${where.join(' AND ')} ORDER BY c.id DESC LIMIT $${params.length}`,
    params,
  );
  return rows;
}

/** One record of a team, with its payloads; null when the team has none with this id. */
export async function findCallRecord(db: Queryable, teamId: string, id: string): Promise<CallRecordRow | null> {
  const { rows } = await db.query<CallRecordRow>(
    `SELECT ${COLUMNS}, c.request_payload, c.response_payload
       FROM catalog.call_records c WHERE c.team_id = $1 AND c.id = $2`,
    [teamId, id],
  );
  return rows[0] ?? null;
}

/**
 * Deletes up to `limit` records that occurred more than `days` ago; returns how many. Rows another replica is
 * deleting right now are skipped, so replicas share the work instead of waiting on each other.
 */
export async function deleteExpiredCallRecords(db: Queryable, days: number, limit: number): Promise<number> {
  const result = await db.query(
    `DELETE FROM catalog.call_records
      WHERE id IN (SELECT id FROM catalog.call_records
                    WHERE occurred_at < now() - make_interval(days => $1::int)
                    LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [days, limit],
  );
  return result.rowCount ?? 0;
}
