import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError } from '@platform/runtime';
import { toAppError } from './to-app-error';

/** Whether the request carries a body at all (the same test body-parser uses). */
function hasBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length !== '0';
}

/**
 * JSON body parsing for `/v1`: only `application/json` is accepted (415 otherwise), bodies over the limit
 * are 413, and malformed JSON is 400 — each raised as an AppError so it renders in the one error shape.
 */
export function jsonBodyMiddleware(limitBytes: number) {
  const parseJson = express.json({ limit: limitBytes, type: 'application/json', strict: true });
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!hasBody(req)) {
      next();
      return;
    }
    if (!req.is('application/json')) {
      next(new AppError('unsupported_media_type', 'Request bodies must be application/json'));
      return;
    }
    parseJson(req, res, (error?: unknown) => {
      if (error === undefined) next();
      else next(toAppError(error));
    });
  };
}
