import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { context, extractTraceContext, SpanKind, SpanStatusCode, trace, tracer } from '@platform/runtime';
import { routeTemplateOf, UNMATCHED_ROUTE } from './route-template';

/**
 * Opens a SERVER span for the request, continuing the caller's trace when a `traceparent` header is sent.
 * The span lives until the response closes (finished, or the connection dropped); its name becomes
 * `METHOD /route/template` once a route has matched.
 */
export function serverSpanMiddleware(req: Request, res: Response, next: NextFunction): void {
  inServerSpan(req, res, () => routeTemplateOf(req, res), next);
}

/**
 * Runs `next` inside the request's SERVER span. When tracing is off (no SDK started: the span is a no-op without a
 * trace id) there is nothing to record or pass on: `next` runs as it is, which keeps the cost of an untraced request
 * near zero. A span the sampler dropped does not record either, but it carries the trace id and the decision the
 * request's calls must follow (parent-based sampling): without it, each of them would start a trace of its own.
 */
export function inServerSpan(req: IncomingMessage, res: ServerResponse, routeOf: () => string, next: () => void): void {
  const method = req.method ?? 'GET';
  // Only the W3C trace context is taken from the caller (never its `baggage`, nor the other headers).
  const { traceparent, tracestate } = req.headers;
  const parent = traceparent !== undefined ? extractTraceContext({ traceparent, tracestate }) : context.active();
  const span = tracer.startSpan(`${method} ${UNMATCHED_ROUTE}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, parent);
  if (!span.isRecording() && !trace.isSpanContextValid(span.spanContext())) {
    next();
    return;
  }
  const end = () => {
    const route = routeOf();
    span.updateName(`${method} ${route}`);
    span.setAttribute('http.route', route);
    // A request whose client went away before an answer began has no status (the access log's 499 is none it was sent).
    if (res.headersSent) {
      span.setAttribute('http.response.status_code', res.statusCode);
      // Server errors mark the span; 4xx answers are the caller's problem (OTel HTTP conventions).
      if (res.statusCode >= 500) {
        span.setAttribute('error.type', String(res.statusCode));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
    span.end();
  };
  // 'close' follows 'finish' on every response and also comes alone when the connection drops.
  res.once('close', end);
  context.with(trace.setSpan(parent, span), next);
}
