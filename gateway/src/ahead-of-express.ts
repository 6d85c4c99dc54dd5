import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Logger, withLogContext } from '@platform/runtime';
import { observeWhenDone } from './access-log';
import { renderError } from './error-handler';
import { assignRequestId } from './request-id';
import { inServerSpan } from './server-span';

/**
 * Serves a request straight from node's HTTP server with what the edge's express app does around every route, in
 * the same order: the request id and its log context, the SERVER span, then the duration metric and access log line
 * (recorded inside the span, so the line carries its trace id), all under `route`. A failure `serve` does not answer
 * is the edge's error answer, as express's error handler gives it.
 */
export function serveAheadOfExpress(logger: Logger, req: IncomingMessage, res: ServerResponse, route: string, serve: () => Promise<void>): void {
  const routeOf = () => route;
  const requestId = assignRequestId(req, res);
  withLogContext({ requestId }, () =>
    inServerSpan(req, res, routeOf, () => {
      observeWhenDone(logger, req, res, routeOf);
      serve().catch((error: unknown) => renderError(logger, res, error));
    }),
  );
}
