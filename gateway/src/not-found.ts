import type { Express, NextFunction, Request, Response } from 'express';
import { AppError } from '@platform/runtime';

/** The slice of express 5's router (package `router` 2.x) read to find the methods a path answers to. */
interface RouterLayer {
  route?: { _methods(): string[] };
  handle: { stack?: RouterLayer[] };
  match(path: string): false | { path: string };
}

function methodsForPath(stack: readonly RouterLayer[], path: string): Set<string> {
  const methods = new Set<string>();
  for (const layer of stack) {
    if (layer.route) {
      if (layer.match(path)) for (const method of layer.route._methods()) methods.add(method);
      continue;
    }
    // A mounted router: look inside it with the part of the path it did not consume.
    if (Array.isArray(layer.handle.stack)) {
      const matched = layer.match(path);
      if (matched) {
        const rest = path.slice(matched.path.length) || '/';
        for (const method of methodsForPath(layer.handle.stack, rest.startsWith('/') ? rest : `/${rest}`)) methods.add(method);
      }
    }
  }
  return methods;
}

/**
 * The last handler: 405 with `Allow` when the path exists for other methods, else 404 — both in the error
 * shape. It reads the app's route table so routes mounted by later features are covered too.
 */
export function notFoundHandler(app: Express) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    let allowed: string[];
    try {
      const stack = (app as unknown as { router: { stack: RouterLayer[] } }).router.stack;
      allowed = [...methodsForPath(stack, req.path)];
    } catch {
      // The router's internals moved: fall back to a plain 404 rather than fail the request.
      allowed = [];
    }
    if (allowed.length > 0) {
      const headers = { Allow: allowed.sort().join(', ') };
      next(new AppError('method_not_allowed', `Method ${req.method} is not allowed here`, { headers }));
      return;
    }
    next(new AppError('not_found', 'No such route'));
  };
}
