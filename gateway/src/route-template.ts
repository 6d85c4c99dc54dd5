import type { Request, Response } from 'express';

/** Used in span names, logs and metric labels for requests no route matched: raw paths are unbounded. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Records the template of the route serving this request (OpenAPI style, for example `/v1/teams/{team}`). */
export function setRouteTemplate(res: Response, template: string): void {
  res.locals.routeTemplate = template;
}

/**
 * The route template of a request: the one a `/v1` route recorded, else the express route path of a plain
 * route (the ops endpoints, mounted routes), else `unmatched`. Never the raw path or query string.
 */
export function routeTemplateOf(req: Request, res: Response): string {
  const recorded = res.locals.routeTemplate as string | undefined;
  if (recorded) return recorded;
  const routePath = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof routePath === 'string') return `${req.baseUrl}${routePath}`;
  return UNMATCHED_ROUTE;
}
