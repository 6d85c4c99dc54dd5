import { context, injectTraceHeaders, SpanKind, SpanStatusCode, trace, tracer, type Span } from '@platform/runtime';
import type { GatewayRpcError } from './jsonrpc';

/**
 * The CLIENT span of one HTTP exchange with an upstream MCP server (OTel HTTP client conventions), so a trace shows
 * the upstream's time apart from the edge's own, and the upstream's span, through the `traceparent` it is sent, is
 * its child. Named by the method alone, with `server.address`/`server.port` and no `url.full`: an upstream's URL may
 * carry a secret in its path or query (a key some servers put there), and the address names the server well enough.
 *
 * Made only inside a span that records: a request that is not traced (tracing off, which is how the data plane is
 * benchmarked, or sampled out) gets none, and nothing is allocated for it; its `traceparent` is the request's own.
 */
export function startUpstreamSpan(method: 'POST' | 'GET' | 'DELETE', url: string | URL): Span | undefined {
  const parent = context.active();
  if (!trace.getSpan(parent)?.isRecording()) return undefined;
  const target = typeof url === 'string' ? new URL(url) : url;
  const port = target.port ? Number(target.port) : target.protocol === 'https:' ? 443 : 80;
  return tracer.startSpan(
    method,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': method,
        // An IPv6 literal without its URL brackets.
        'server.address': target.hostname.replace(/^\[(.*)\]$/, '$1'),
        'server.port': port,
      },
    },
    parent,
  );
}

/** The W3C trace context headers for a request to the upstream: the exchange's span, else the active context's. */
export function upstreamTraceHeaders(span: Span | undefined): Record<string, string> {
  return injectTraceHeaders(span ? trace.setSpan(context.active(), span) : undefined);
}

/** The upstream's status code; a 5xx marks the span (4xx answers are part of the protocol: session gone, no GET stream). */
export function recordUpstreamStatus(span: Span | undefined, statusCode: number): void {
  if (!span) return;
  span.setAttribute('http.response.status_code', statusCode);
  if (statusCode >= 500) {
    span.setAttribute('error.type', String(statusCode));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
}

/** Ends the span, marking it failed when the exchange did (`error.type` is the failure's class: timeout, unreachable…). */
export function endUpstreamSpan(span: Span | undefined, failure?: GatewayRpcError): void {
  if (!span) return;
  if (failure) {
    span.setAttribute('error.type', failure.errorClass);
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}
