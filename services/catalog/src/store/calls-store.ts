import { columnNames, type Queryable, type Transaction } from '@platform/runtime';

/** A `catalog.call_records` row with whether its gateway and server still exist (computed when read). */
export interface CallRecordRow {
  id: string;
  team_id: string;
  occurred_at: Date;
  /** occurred_at exactly, as text (microseconds; a Date keeps milliseconds): where the next page's cursor resumes. */
  position: string;
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

/** What the calls of a stored batch share: their team, gateway, server, principal and client. */
export interface NewCallContext {
  teamId: string;
  gateway: { id: string; slug: string; name: string };
  server: { id: string; slug: string; name: string } | null;
  principal: Record<string, unknown>;
  principalUserId: string | null;
  clientName: string;
}

/** A call to store; `context` is its index in the batch's contexts. */
export interface NewCall {
  eventId: string;
  context: number;
  occurredAt: string;
  method: string;
  exposedName: string;
  outcome: string;
  errorClass: string;
  providerSlug: string;
  latencyMs: number;
  requestBytes: number;
  responseBytes: number;
  requestId: string;
  payloads: { request: string; response: string; requestTruncated: boolean; responseTruncated: boolean } | null;
}

/** Calls per statement: a transaction of the consumer (two events of up to 500 calls) in one. */
const CALLS_PER_STATEMENT = 2_000;

/** A context as a row of the statement's second JSON parameter (json_to_recordset's column names). */
function contextRow(context: NewCallContext): Record<string, unknown> {
  return {
    team_id: context.teamId,
    gateway_id: context.gateway.id,
    gateway_slug: context.gateway.slug,
    gateway_name: context.gateway.name,
    server_id: context.server?.id ?? null,
    server_slug: context.server?.slug ?? '',
    server_name: context.server?.name ?? '',
    principal: context.principal,
    principal_user_id: context.principalUserId,
    client_name: context.clientName,
  };
}

/** A call as a row of the statement's first JSON parameter; `context` counts from 1 (ORDINALITY). */
function callRow(call: NewCall): Record<string, unknown> {
  return {
    event_id: call.eventId,
    context: call.context + 1,
    occurred_at: call.occurredAt,
    method: call.method,
    exposed_name: call.exposedName,
    outcome: call.outcome,
    error_class: call.errorClass,
    provider_slug: call.providerSlug,
    latency_ms: call.latencyMs,
    request_bytes: call.requestBytes,
    response_bytes: call.responseBytes,
    request_id: call.requestId,
    captured: call.payloads !== null,
    request_payload: call.payloads?.request ?? null,
    response_payload: call.payloads?.response ?? null,
    request_truncated: call.payloads?.requestTruncated ?? false,
    response_truncated: call.payloads?.responseTruncated ?? false,
  };
}

/** A call's own columns and a context's, with their types, as json_to_recordset reads them. */
const CALL_RECORD = `event_id uuid, occurred_at timestamptz, method text, exposed_name text, outcome text, error_class text,
  provider_slug text, latency_ms int, request_bytes bigint, response_bytes bigint, request_id text, captured boolean,
  request_payload text, response_payload text, request_truncated boolean, response_truncated boolean`;
const CONTEXT_RECORD = `team_id uuid, gateway_id uuid, gateway_slug text, gateway_name text, server_id uuid, server_slug text,
  server_name text, principal jsonb, principal_user_id uuid, client_name text`;
const CALL_COLUMNS = columnNames(CALL_RECORD);
const CONTEXT_COLUMNS = columnNames(CONTEXT_RECORD);

/**
 * One prepared statement whatever the batch size: the calls and the contexts they share travel as two JSON
 * parameters, joined back into rows here (a statement with a placeholder per value had to be parsed and planned
 * afresh for every batch; sending every row whole repeated each context's names and ids per call). WITH ORDINALITY
 * numbers the contexts and keeps the batch's order in the ids. The parameters are json, not jsonb: each is read once,
 * row by row, and converting it to jsonb first cost PostgreSQL about 3 of its 35 µs per record.
 */
const INSERT_CALL_RECORDS = `
  INSERT INTO catalog.call_records (${CALL_COLUMNS}, ${CONTEXT_COLUMNS})
  SELECT ${CALL_COLUMNS.replace(/(\w+)/g, 'c.$1')}, ${CONTEXT_COLUMNS.replace(/(\w+)/g, 'x.$1')}
    FROM ROWS FROM (json_to_recordset($1::json) AS (context int, ${CALL_RECORD})) WITH ORDINALITY AS c
    JOIN ROWS FROM (json_to_recordset($2::json) AS (${CONTEXT_RECORD})) WITH ORDINALITY AS x ON x.ordinality = c.context
   ORDER BY c.ordinality
  ON CONFLICT (event_id) DO NOTHING`;

/**
 * Stores calls in as few statements as possible; a call whose event was stored before is skipped (event ids are
 * unique). Returns how many were new.
 */
export async function insertCallRecords(db: Queryable, records: CallRecordsBatch): Promise<number> {
  const contexts = JSON.stringify(records.contexts.map(contextRow));
  let stored = 0;
  for (let start = 0; start < records.calls.length; start += CALLS_PER_STATEMENT) {
    const chunk = records.calls.slice(start, start + CALLS_PER_STATEMENT);
    const { rowCount } = await db.query(INSERT_CALL_RECORDS, [JSON.stringify(chunk.map(callRow)), contexts], { prepared: 'catalog_insert_grouped_call_records' });
    stored += rowCount;
  }
  return stored;
}

/** The calls and the contexts they share, as `insertCallRecords` takes them. */
export interface CallRecordsBatch {
  contexts: readonly NewCallContext[];
  calls: readonly NewCall[];
}

/**
 * Whether a statement failed for the values it was given rather than for the database's state: SQLSTATE class 22
 * (data exception: a NUL or an unpaired surrogate in text or JSON, a timestamp out of range, a number too large)
 * or 23 (integrity constraint violation: a CHECK). Such a statement fails the same way however often it is
 * retried. Anything else (a lost connection, a serialization failure, a shutdown) may pass next time.
 */
export function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.length === 5 && (code.startsWith('22') || code.startsWith('23'));
}

/** The calls given with only the contexts they name, renumbered (a refused context must not fail other calls). */
function batchOf(records: CallRecordsBatch, calls: readonly NewCall[]): CallRecordsBatch {
  const contexts: NewCallContext[] = [];
  const renumbered = new Map<number, number>();
  const own = calls.map((call) => {
    let context = renumbered.get(call.context);
    if (context === undefined) renumbered.set(call.context, (context = contexts.push(records.contexts[call.context]!) - 1));
    return { ...call, context };
  });
  return { contexts, calls: own };
}

/**
 * Stores a batch as `insertCallRecords` does, except that calls the database refuses for their data (isDataError)
 * are skipped, each reported to `refused`, and the rest stored: one such record would otherwise fail its
 * consumer's transaction on every redelivery and hold up every record after it on the partition. The batch is
 * tried whole under a savepoint (the failed statement then undoes only itself), then each half of a refused part,
 * down to the single call the database refuses: a handful of statements for one bad record in a thousand. Any
 * other failure is thrown, so the consumer's transaction rolls back and the batch is delivered again.
 */
export async function insertCallRecordsSkippingRefused(
  tx: Transaction,
  records: CallRecordsBatch,
  refused: (call: NewCall, sqlstate: string) => void,
): Promise<number> {
  let stored = 0;
  const attempt = async (calls: readonly NewCall[]): Promise<void> => {
    await tx.query('SAVEPOINT call_records_batch');
    try {
      stored += await insertCallRecords(tx, batchOf(records, calls));
    } catch (error) {
      if (!isDataError(error)) throw error;
      // Undoes the failed statement only; released too, so the halves' savepoints do not pile up.
      await tx.query('ROLLBACK TO SAVEPOINT call_records_batch');
      await tx.query('RELEASE SAVEPOINT call_records_batch');
      if (calls.length === 1) return refused(calls[0]!, (error as { code: string }).code);
      const half = Math.ceil(calls.length / 2);
      await attempt(calls.slice(0, half));
      await attempt(calls.slice(half));
      return;
    }
    await tx.query('RELEASE SAVEPOINT call_records_batch');
  };
  await attempt(records.calls);
  return stored;
}

const COLUMNS = `
  c.id, c.team_id, c.occurred_at, c.occurred_at::text AS position, c.method, c.exposed_name, c.gateway_id, c.gateway_slug, c.gateway_name,
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
  /** Records after this one in the list's order (the cursor): older, or as old with a lower id. */
  after?: { position: string; id: string };
  limit: number;
}

/**
 * A page of a team's records, newest first: by occurred_at, then id (records stored in one millisecond). Every
 * filter has an index ending in that order (migration 0015), so a page, a time window and the cursor are read as
 * one range of it; ordered by id, a time window could not be (docs/catalog.md, Call records). `limit` rows at most.
 */
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
  if (filter.after) {
    params.push(filter.after.position, filter.after.id);
    where.push(`(c.occurred_at, c.id) < ($${params.length - 1}::timestamptz, $${params.length}::bigint)`);
  }
  params.push(filter.limit);
  // The page is chosen first and the exists flags computed for its rows only: in the same SELECT the planner hashed
  // every gateway and server id of the catalog for each page.
  const { rows } = await db.query<CallRecordRow>(
    `SELECT ${COLUMNS}
       FROM (SELECT * FROM catalog.call_records c WHERE ${where.join(' AND ')} ORDER BY c.occurred_at DESC, c.id DESC LIMIT $${params.length}) c
      ORDER BY c.occurred_at DESC, c.id DESC`,
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
 * deleting right now are skipped, so replicas share the work instead of waiting on each other. The time is compared
 * in UTC, the expression of the index `call_records_expiry` (migration 0015), which the list cannot sort by.
 */
export async function deleteExpiredCallRecords(db: Queryable, days: number, limit: number): Promise<number> {
  const result = await db.query(
    `DELETE FROM catalog.call_records
      WHERE id IN (SELECT id FROM catalog.call_records
                    WHERE occurred_at AT TIME ZONE 'UTC' < (now() - make_interval(days => $1::int)) AT TIME ZONE 'UTC'
                    LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [days, limit],
  );
  return result.rowCount ?? 0;
}
