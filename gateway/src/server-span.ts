import type { NextFunction, Request, Response } from 'express';
import { extractTraceContext, SpanKind, SpanStatusCode, withSpan } from '@platform/runtime';
import { routeTemplateOf, UNMATCHED_ROUTE } from './route-template';

/**
 * Opens a SERVER span for the request, continuing the caller's trace when a `traceparent` header is sent.
 * The span lives until the response is finished or the connection closes; its name becomes
 * `METHOD /route/template` once a route has matched.
 */
export function serverSpanMiddleware(req: Request, res: Response, next: NextFunction): void {
  const parent = extractTraceContext(req.headers);
  void withSpan(
    `${req.method} ${UNMATCHED_ROUTE}`,
    { kind: SpanKind.SERVER, parent, attributes: { 'http.request.method': req.method } },
    (span) =>
      new Promise<void>((resolve) => {
        let ended = false;
        const end = () => {
          if (ended) return;
          ended = true;
          const route = routeTemplateOf(req, res);
          span.updateName(`${req.method} ${route}`);
          span.setAttribute('http.route', route);
          span.setAttribute('http.response.status_code', res.statusCode);
          // Server errors mark the span; 4xx answers are the caller's problem (OTel HTTP conventions).
          if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          resolve();
        };
        res.once('finish', end);
        res.once('close', end);
        next();
      }),
  ).catch(() => undefined);
}
