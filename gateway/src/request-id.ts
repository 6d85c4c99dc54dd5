import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { withLogContext } from '@platform/runtime';

/** An incoming id is kept only when it is short and plain enough to be safe in logs and headers. */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._-]{8,128}$/;

export const REQUEST_ID_HEADER = 'X-Request-Id';
const REQUEST_ID = Symbol('request id');
type WithRequestId = ServerResponse & { [REQUEST_ID]?: string };

/** The id of the request being served (set by the first step of the edge). */
export function requestIdOf(res: ServerResponse): string {
  return (res as WithRequestId)[REQUEST_ID] ?? 'unknown';
}

/** Gives the request its id (the caller's when acceptable, else a new one) and echoes it in the response. */
export function assignRequestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const requestId = typeof incoming === 'string' && ACCEPTED_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  (res as WithRequestId)[REQUEST_ID] = requestId;
  res.setHeader(REQUEST_ID_HEADER, requestId);
  return requestId;
}

/** Gives every request an id, echoes it in the response, and runs the rest of the chain in its log context. */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const requestId = assignRequestId(req, res);
  withLogContext({ requestId }, () => next());
}
