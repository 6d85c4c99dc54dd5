import type { Attributes } from '@opentelemetry/api';
import { SpanKind, trace, withSpan } from '../telemetry/tracing';
import type { QueryResult } from './port';
import { querySummary } from './query-summary';
import { sqlStateOf } from './sql-state';

/** Both adapters speak PostgreSQL (PGlite is PostgreSQL compiled to WebAssembly). */
const DB_SYSTEM = 'postgresql';

/**
 * Summaries by statement text: the statements are the code's own constants, so a traced process scans each once.
 * Cleared when full, so statements built at run time (a list of `$n` of varying length) cannot grow it without bound.
 */
const summaries = new Map<string, string>();
const MAX_REMEMBERED_SUMMARIES = 2_000;

function summaryOf(sql: string): string {
  let summary = summaries.get(sql);
  if (summary === undefined) {
    if (summaries.size >= MAX_REMEMBERED_SUMMARIES) summaries.clear();
    summary = querySummary(sql);
    summaries.set(sql, summary);
  }
  return summary;
}

/**
 * Runs one statement inside a CLIENT span named and described by the stable OTel database conventions:
 * `db.system.name`, `db.query.summary` (also the span's name, `db.system.name` when the statement has none), the
 * adapter's `connection` attributes (`db.namespace`, `server.address`, `server.port`) and, on failure, `error.type`
 * with the SQLSTATE as `db.response.status_code`. `db.operation.name` and `db.collection.name` are not set: the
 * PostgreSQL conventions say not to extract them from query text, which is all this level sees.
 *
 * `db.query.text` is recorded only for a `parameterised` statement, whose values travel apart from its text; other
 * text may hold values, and bound values are never recorded. A statement outside any recording span (the outbox
 * relays' polls, housekeeping) gets no span: each would be a trace of one span of its own, about 24 a second per
 * replica from the relays alone (the OTel pg instrumentation's `requireParentSpan`).
 */
export function tracedQuery<Row>(
  connection: Attributes,
  sql: string,
  parameterised: boolean,
  run: () => Promise<QueryResult<Row>>,
): Promise<QueryResult<Row>> {
  if (!trace.getActiveSpan()?.isRecording()) return run();
  const summary = summaryOf(sql);
  const attributes: Attributes = { 'db.system.name': DB_SYSTEM, ...connection };
  if (summary) attributes['db.query.summary'] = summary;
  if (parameterised) attributes['db.query.text'] = sql;
  return withSpan(summary || DB_SYSTEM, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    try {
      return await run();
    } catch (error) {
      span.setAttributes(failureAttributes(error));
      throw error;
    }
  });
}

/** A server's error by its SQLSTATE (`23505`); a failure short of the server by its code (`ECONNREFUSED`) or class. */
function failureAttributes(error: unknown): Attributes {
  const state = sqlStateOf(error);
  if (state !== undefined) return { 'db.response.status_code': state, 'error.type': state };
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  return { 'error.type': typeof code === 'string' ? code : typeof name === 'string' ? name : '_OTHER' };
}
