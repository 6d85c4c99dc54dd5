import type { NextFunction, Request, Response } from 'express';
import type { z } from 'zod';
import { etagFor, parseIfMatch, requireIfMatch } from './conditional';
import { AppError, type FieldError } from '@platform/runtime';
import { requestIdOf } from './request-id';
import type { AnyRouteDefinition, HandlerResult, RouteContext, RouteRequest } from './route';
import { isPageResponseSchema } from './pagination';
import { setRouteTemplate } from './route-template';
import { coerceStringInput } from './validation/coerce';
import { fieldErrorsOf } from './validation/field-errors';
import { nulFieldErrors } from './validation/text';
import { undeclaredFields } from './validation/zod-introspection';

/** Runs before validation; what it returns is `ctx.auth`. Throw an AppError (401/403) to refuse the call. */
export type Authenticate = (req: Request, route: AnyRouteDefinition) => Promise<unknown>;

const PART_LABEL = { params: 'path parameters', query: 'query parameters', body: 'body' } as const;
type Part = keyof typeof PART_LABEL;

function hasContent(body: unknown): boolean {
  if (body === undefined || body === null) return false;
  if (Array.isArray(body)) return true;
  return typeof body !== 'object' || Object.keys(body as object).length > 0;
}

/** Validates every part, collecting all problems so the caller sees every bad field at once. */
function validate(route: AnyRouteDefinition, req: Request): Pick<RouteContext<RouteRequest>, 'params' | 'query' | 'body'> {
  const request = route.request ?? {};
  const inputs: Record<Part, unknown> = {
    params: request.params ? coerceStringInput(request.params, { ...req.params }) : {},
    query: request.query ? coerceStringInput(request.query, { ...(req.query as Record<string, unknown>) }) : {},
    // A missing body is read as `{}`, so a required field is reported by name rather than "body required".
    body: req.body ?? {},
  };
  const output: Record<Part, unknown> = { params: {}, query: {}, body: {} };
  const fields: FieldError[] = [];
  const badParts: Part[] = [];
  for (const part of ['params', 'query', 'body'] as const) {
    const schema = request[part] as z.ZodType | undefined;
    if (!schema) {
      if (part === 'body' && hasContent(inputs.body)) {
        fields.push({ field: 'body', problem: 'this operation takes no request body' });
        badParts.push(part);
      }
      continue;
    }
    const parsed = schema.safeParse(inputs[part]);
    // PostgreSQL cannot hold a NUL in text or jsonb: refused here for every route, whatever its schema says.
    const nul = parsed.success ? nulFieldErrors(parsed.data, part) : [];
    if (parsed.success && nul.length > 0) {
      fields.push(...nul);
      badParts.push(part);
    } else if (parsed.success) output[part] = parsed.data;
    else {
      fields.push(...fieldErrorsOf(parsed.error, part));
      badParts.push(part);
    }
  }
  if (fields.length > 0) {
    const where = badParts.map((p) => PART_LABEL[p]).join(' and ');
    throw AppError.invalid(`The request ${where} ${badParts.length > 1 ? 'are' : 'is'} invalid`, fields);
  }
  return output as Pick<RouteContext<RouteRequest>, 'params' | 'query' | 'body'>;
}

/** On routes that do not demand If-Match the header is informative only; an unusable value is ignored. */
function optionalIfMatch(req: Request): number | undefined {
  try {
    return parseIfMatch(req.headers['if-match']);
  } catch {
    return undefined;
  }
}

/** The JSON body of a result with data: `data`, and `nextCursor` beside it for a list. */
function bodyOf(result: Extract<HandlerResult, { data: unknown }>): Record<string, unknown> {
  const body: Record<string, unknown> = { data: result.data };
  if (result.nextCursor !== undefined) body.nextCursor = result.nextCursor;
  return body;
}

function send(res: Response, result: HandlerResult): void {
  for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
  if (!('data' in result)) {
    res.status(result.status).end();
    return;
  }
  if (result.revision !== undefined) res.setHeader('ETag', etagFor(result.revision));
  res.status(result.status ?? 200).json(bodyOf(result));
}

/**
 * Holds an answer to what its route documents (CHECK_RESPONSES, on in tests): its status is declared, it has a body
 * exactly when the status declares one, and that body, as sent, has the declared schema's shape with no undeclared
 * field. A deviation is the edge's own bug, so it fails the request (500) loudly rather than send an undocumented
 * answer (which could carry a field never meant to leave).
 */
function checkResponse(route: AnyRouteDefinition, result: HandlerResult): void {
  const status = result.status ?? 200;
  const declared = route.responses[status];
  if (!declared) throw new Error(`${route.operationId} answered ${status}, a status it does not declare`);
  const hasBody = 'data' in result;
  if (hasBody !== (declared.schema !== undefined)) {
    throw new Error(`${route.operationId} answered ${status} ${hasBody ? 'with a body it does not declare' : 'without the body it declares'}`);
  }
  if (!hasBody || !declared.schema) return;
  const sent = JSON.parse(JSON.stringify(bodyOf(result))) as Record<string, unknown>;
  // A list's schema is the whole page; anything else's is the schema of `data`, and nothing may go beside it.
  const page = isPageResponseSchema(declared.schema);
  const body = page ? sent : sent.data;
  const problems = !page && 'nextCursor' in sent ? ['nextCursor: not declared (not a list)'] : [];
  const parsed = declared.schema.safeParse(body);
  if (!parsed.success) problems.push(...parsed.error.issues.slice(0, 5).map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`));
  problems.push(...undeclaredFields(declared.schema, body).slice(0, 5).map((field) => `${field}: not declared`));
  if (problems.length > 0) throw new Error(`${route.operationId} answered ${status} off its schema: ${problems.join('; ')}`);
}

/** The express handler of a defined route: authenticate, check If-Match, validate, run, render. */
export function routeHandler(route: AnyRouteDefinition, authenticate: Authenticate | undefined, checkResponses = false) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    setRouteTemplate(res, route.path);
    try {
      const auth = authenticate ? await authenticate(req, route) : undefined;
      const ifMatch = route.request?.headers?.ifMatch ? requireIfMatch(req) : optionalIfMatch(req);
      const parts = validate(route, req);
      const result = await route.handler({ ...parts, ifMatch, auth, requestId: requestIdOf(res), req, res });
      if (result === undefined) {
        if (!res.headersSent) throw new Error(`handler of ${route.operationId} returned nothing and sent nothing`);
        return;
      }
      if (checkResponses) checkResponse(route, result);
      send(res, result);
    } catch (error) {
      next(error);
    }
  };
}
