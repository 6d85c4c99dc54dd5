import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { errorBody } from './error-body';
import { type Logger, trace } from '@platform/runtime';
import { requestIdOf } from './request-id';
import { toAppError } from './to-app-error';

/**
 * Renders every error in the one error shape, with the status from the code table and the AppError's extra
 * headers. 5xx errors are logged with their cause and stack; the response only ever carries the code and
 * the caller-safe message.
 */
export function errorHandler(logger: Logger) {
  return (error: unknown, _req: Request, res: Response, _next: NextFunction): void => renderError(logger, res, error);
}

/** The edge's one error answer, for express routes and for what is served ahead of express (`/mcp/{slug}`). */
export function renderError(logger: Logger, res: ServerResponse, error: unknown): void {
  const appError = toAppError(error);
  const status = appError.httpStatus;
  if (status >= 500) {
    trace.getActiveSpan()?.recordException(error instanceof Error ? error : new Error(String(error)));
    logger.error({ err: error, code: appError.code }, 'request failed');
  }
  if (res.headersSent) {
    // Too late to send an error body: cut the response so the client sees it is incomplete.
    res.destroy();
    return;
  }
  const text = JSON.stringify(errorBody(appError, requestIdOf(res)));
  res.writeHead(status, { ...(appError.headers ?? {}), 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
