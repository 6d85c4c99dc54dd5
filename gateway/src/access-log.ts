import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { context, httpRequestDuration, type Logger, withLogContext } from '@platform/runtime';
import { requestIdOf } from './request-id';
import { routeTemplateOf } from './route-template';

/**
 * One log line and one duration observation per request, written when the response is done. Only the route
 * template is recorded, never the path or query string (they can carry ids or secrets), and no headers.
 */
export function accessLogMiddleware(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    observeWhenDone(logger, req, res, () => routeTemplateOf(req, res));
    next();
  };
}

/** Records the request's duration metric and access log line once its response is finished or abandoned. */
export function observeWhenDone(logger: Logger, req: IncomingMessage, res: ServerResponse, routeOf: () => string): void {
  const startedAt = process.hrtime.bigint();
  // Response events fire outside the request's async context; re-enter it so the line carries trace ids.
  const logging = logger.isLevelEnabled('info');
  const activeContext = logging ? context.active() : undefined;
  const record = () => {
    const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
    const route = routeOf();
    const status = res.writableFinished ? res.statusCode : 499; // 499: the client went away first
    const method = req.method ?? 'GET';
    httpRequestDuration.observe(method, route, status, seconds);
    if (!activeContext) return;
    context.with(activeContext, () =>
      withLogContext({ requestId: requestIdOf(res) }, () => logger.info({ method, route, status, durationMs: Math.round(seconds * 1e6) / 1e3 }, 'request')),
    );
  };
  // 'close' follows 'finish' on every response and also comes alone when the client goes away: one listener sees both.
  res.once('close', record);
}
