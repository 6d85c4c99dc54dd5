import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
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
  /** Spans of other traces this one works for (a batch's messages: `linksFromTraceHeaders`). */
  links?: Link[];
}

/** Runs `fn` inside a new active span, ending it and recording any error thrown. */
export async function withSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer.startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links: options.links }, parent);
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

/**
 * A link to each distinct span that W3C trace-context headers name, for a span working for many traces at once: the
 * outbox relay's publish of a batch links to the span that wrote each event (OTel messaging conventions), so each
 * publish leads to the requests whose events it carried. Empty when tracing is off.
 */
export function linksFromTraceHeaders(carriers: ReadonlyArray<Record<string, string>>): Link[] {
  const links: Link[] = [];
  const seen = new Set<string>();
  for (const carrier of carriers) {
    if (!carrier.traceparent) continue;
    const linked = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, carrier));
    if (!linked || !trace.isSpanContextValid(linked) || seen.has(linked.spanId)) continue;
    seen.add(linked.spanId);
    links.push({ context: linked });
  }
  return links;
}

export function currentTraceId(): string | undefined {
  const id = trace.getActiveSpan()?.spanContext().traceId;
  return id && id !== '00000000000000000000000000000000' ? id : undefined;
}
