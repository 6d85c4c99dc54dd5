import { SpanKind, trace, withSpan } from '../telemetry/tracing';
import type { QueryResult } from './port';

/** The first SQL keyword (`SELECT`, `INSERT`, ...), the only part of a statement a span records. */
export function sqlOperation(sql: string): string {
  const match = /^\s*(?:(?:--[^\n]*\n)|(?:\/\*[\s\S]*?\*\/)|\s)*([a-zA-Z]+)/.exec(sql);
  return match ? match[1]!.toUpperCase() : 'UNKNOWN';
}

/**
 * Runs one statement inside a CLIENT span. Parameters and SQL text are never recorded. A statement outside any
 * recording span (the outbox relays' polls, housekeeping) gets none: each would be a trace of one span of its own,
 * about 24 a second per replica from the relays alone (the OTel pg instrumentation's `requireParentSpan`).
 */
export function tracedQuery<Row>(sql: string, run: () => Promise<QueryResult<Row>>): Promise<QueryResult<Row>> {
  if (!trace.getActiveSpan()?.isRecording()) return run();
  return withSpan(
    'db.query',
    { kind: SpanKind.CLIENT, attributes: { 'db.system': 'postgresql', 'db.operation': sqlOperation(sql) } },
    () => run(),
  );
}
