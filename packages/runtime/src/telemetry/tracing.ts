import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';

export { SpanKind, SpanStatusCode, context, trace, propagation } from '@opentelemetry/api';
export type { Span, Context } from '@opentelemetry/api';

/**
 * Spans are made by hand at the platform's few boundaries (HTTP in, gRPC in/out, SQL, bus produce/consume)
 * rather than by require-hook auto-instrumentation, so they work the same under tsx, jest and a bundle.
 */
export const tracer = trace.getTracer('mcp-platform');

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** Parent context; defaults to the active one. */
  parent?: Context;
}

/** Runs `fn` inside a new active span, ending it and recording any error thrown. */
export async function withSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer.startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
    throw error;
  } finally {
    span.end();
  }
}

/** W3C trace-context headers (`traceparent`, `tracestate`) for the given or active context. */
export function injectTraceHeaders(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

/** The context carried by W3C trace-context headers, with the active context as the base. */
export function extractTraceContext(headers: Record<string, string | string[] | undefined>): Context {
  const carrier: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (typeof value === 'string') carrier[key.toLowerCase()] = value;
    else if (Array.isArray(value) && value.length > 0) carrier[key.toLowerCase()] = value[0]!;
  }
  return propagation.extract(context.active(), carrier);
}

export function currentTraceId(): string | undefined {
  const id = trace.getActiveSpan()?.spanContext().traceId;
  return id && id !== '00000000000000000000000000000000' ? id : undefined;
}
