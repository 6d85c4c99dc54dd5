import { AsyncLocalStorage } from 'node:async_hooks';
import { trace } from '@opentelemetry/api';
import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

/** Values every log line written while serving one request carries. */
export interface LogContext {
  requestId?: string;
}

const logContext = new AsyncLocalStorage<LogContext>();

/** Runs `fn` with `context` attached to every log line written inside it (across awaits). */
export function withLogContext<T>(context: LogContext, fn: () => T): T {
  return logContext.run({ ...logContext.getStore(), ...context }, fn);
}

export function currentLogContext(): LogContext | undefined {
  return logContext.getStore();
}

/**
 * Keys whose values are never written, wherever they appear in a logged object. This is a second line of
 * defence: code must not log secrets in the first place.
 */
export const REDACTED_KEYS = [
  'password',
  'secret',
  'token',
  'accessToken',
  'refreshToken',
  'apiKey',
  'authorization',
  'cookie',
  'authValue',
  'clientSecret',
  'sessionToken',
  'newPassword',
  'privateKey',
  'code_verifier',
  // OAuth's own spelling (RFC 6749), as a request body or a token answer carries them.
  'access_token',
  'refresh_token',
  'client_secret',
  // A database error's bound parameters (PGlite attaches them): the db module strips them, this is the backstop.
  'params',
  'headers.authorization',
  'headers.cookie',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-csrf-token"]',
];

/**
 * Where a key is redacted: at the top, one and two levels down (`{ err: { cause: { params } } }`). pino compiles
 * the paths once; it has no recursive wildcard, and a deep copy of every line would cost the hot path's access log.
 */
function redactionPaths(key: string): string[] {
  return key.includes('.') || key.includes('[') ? [key] : [key, `*.${key}`, `*.*.${key}`];
}

/** Trace flags as W3C trace context writes them: two lowercase hex digits (`01` sampled, `00` not). */
function w3cTraceFlags(flags: number): string {
  return (flags & 0xff).toString(16).padStart(2, '0');
}

export function createLogger(options: { level?: string; name?: string; destination?: DestinationStream } = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { app: options.name ?? 'mcp-platform' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_KEYS.flatMap(redactionPaths), censor: '[redacted]' },
      mixin() {
        const fields: Record<string, string> = {};
        const store = logContext.getStore();
        if (store?.requestId) fields.requestId = store.requestId;
        const span = trace.getActiveSpan()?.spanContext();
        if (span && trace.isSpanContextValid(span)) {
          // OTel's names for trace context in a non-OTLP log ("Trace Context in non-OTLP Log Formats"): the fields
          // log pipelines (the collector's json parser, Grafana, Datadog) look for to lead from a line to its trace.
          fields.trace_id = span.traceId;
          fields.span_id = span.spanId;
          fields.trace_flags = w3cTraceFlags(span.traceFlags);
        }
        return fields;
      },
    },
    options.destination,
  );
}
