import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { withLogContext } from '@platform/runtime';

/** An incoming id is kept only when it is short and plain enough to be safe in logs and headers. */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._-]{8,128}$/;

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** The id of the request being served (set by the first middleware of the edge). */
export function requestIdOf(res: Response): string {
  return (res.locals.requestId as string | undefined) ?? 'unknown';
}

/** Gives every request an id, echoes it in the response, and runs the rest of the chain in its log context. */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const incoming = req.get(REQUEST_ID_HEADER);
  const requestId = incoming !== undefined && ACCEPTED_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.locals.requestId = requestId;
  res.setHeader(REQUEST_ID_HEADER, requestId);
  withLogContext({ requestId }, () => next());
}
