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

/** Rows per statement: a batch of the consumer (500) in one. */
const ROWS_PER_STATEMENT = 500;

/** One record as a row of the statement's JSON parameter (jsonb_to_recordset's column names). */
function rowOf(record: NewCallRecord): Record<string, unknown> {
  return {
    event_id: record.eventId,
    team_id: record.teamId,
    occurred_at: record.occurredAt,
    method: record.method,
    exposed_name: record.exposedName,
    gateway_id: record.gateway.id,
    gateway_slug: record.gateway.slug,
    gateway_name: record.gateway.name,
    server_id: record.server?.id ?? null,
    server_slug: record.server?.slug ?? '',
    server_name: record.server?.name ?? '',
    principal: record.principal,
    principal_user_id: record.principalUserId,
    client_name: record.clientName,
    outcome: record.outcome,
    error_class: record.errorClass,
    provider_slug: record.providerSlug,
    latency_ms: record.latencyMs,
    request_bytes: record.requestBytes,
    response_bytes: record.responseBytes,
    request_id: record.requestId,
    captured: record.payloads !== null,
    request_payload: record.payloads?.request ?? null,
    response_payload: record.payloads?.response ?? null,
    request_truncated: record.payloads?.requestTruncated ?? false,
    response_truncated: record.payloads?.responseTruncated ?? false,
  };
}

const RECORD_COLUMNS = `event_id, team_id, occurred_at, method, exposed_name, gateway_id, gateway_slug, gateway_name, server_id,
  server_slug, server_name, principal, principal_user_id, client_name, outcome, error_class, provider_slug, latency_ms,
  request_bytes, response_bytes, request_id, captured, request_payload, response_payload, request_truncated, response_truncated`;

/**
 * One prepared statement whatever the batch size: the records travel as one JSON parameter (a statement with a
 * placeholder per value had to be parsed and planned afresh for every batch, with up to 13,000 parameters).
 * WITH ORDINALITY keeps the batch's order in the ids.
 */
const INSERT_CALL_RECORDS = `
  INSERT INTO catalog.call_records (${RECORD_COLUMNS})
  SELECT ${RECORD_COLUMNS}
    FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (
           event_id uuid, team_id uuid, occurred_at timestamptz, method text, exposed_name text, gateway_id uuid,
           gateway_slug text, gateway_name text, server_id uuid, server_slug text, server_name text, principal jsonb,
           principal_user_id uuid, client_name text, outcome text, error_class text, provider_slug text, latency_ms int,
           request_bytes bigint, response_bytes bigint, request_id text, captured boolean, request_payload text,
           response_payload text, request_truncated boolean, response_truncated boolean))
         WITH ORDINALITY AS r (${RECORD_COLUMNS}, position)
   ORDER BY r.position
  ON CONFLICT (event_id) DO NOTHING`;

/**
 * Stores records in as few statements as possible; a record whose event was stored before is skipped (event ids
 * are unique). Returns how many were new.
 */
export async function insertCallRecords(db: Queryable, records: readonly NewCallRecord[]): Promise<number> {
  let stored = 0;
  for (let start = 0; start < records.length; start += ROWS_PER_STATEMENT) {
    const chunk = records.slice(start, start + ROWS_PER_STATEMENT);
    const { rowCount } = await db.query(INSERT_CALL_RECORDS, [JSON.stringify(chunk.map(rowOf))], { prepared: 'catalog_insert_call_records' });
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
