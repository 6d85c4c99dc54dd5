import type { Request, Response } from 'express';
import { z } from 'zod';
import type { RoutePolicy } from './auth/policy';
import { definitionOf, isStrictObject, nonStrictNestedObjects } from './validation/zod-introspection';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

type AnyObjectSchema = z.ZodObject<z.ZodRawShape>;

export interface RouteRequest {
  params?: AnyObjectSchema;
  query?: AnyObjectSchema;
  /** Unknown fields are refused: the top level is made strict, nested objects must be `z.strictObject`. */
  body?: AnyObjectSchema;
  /**
   * `ifMatch`: the route requires `If-Match` naming a revision. `ifMatchFingerprint`: it takes an optional `If-Match`
   * naming a definition's fingerprint instead (capability approvals; the handler parses it, `parseIfMatchFingerprint`).
   */
  headers?: { ifMatch?: boolean; ifMatchFingerprint?: boolean };
}

export interface RouteResponse {
  description: string;
  /** The schema of `data` (the edge wraps it), or a `pageResponse(item)` for a whole list body. */
  schema?: z.ZodType;
  /** Whether this response carries `ETag`; defaults to true for 2xx responses of If-Match routes. */
  etag?: boolean;
}

/**
 * Who may call a route: its policy (auth/policy.ts), enforced by the `authenticate` hook; `callers` is the rule
 * in words, shown as "Caller" in the docs.
 */
export type RouteAuth = RoutePolicy;

type Infer<S> = S extends z.ZodType ? z.output<S> : Record<string, never>;

export interface RouteContext<R extends RouteRequest> {
  params: Infer<R['params']>;
  query: Infer<R['query']>;
  body: Infer<R['body']>;
  /** The revision named by If-Match: always a number when the route requires the header. */
  ifMatch: R['headers'] extends { ifMatch: true } ? number : number | undefined;
  requestId: string;
  /** Whatever the app's `authenticate` hook returned for this request (undefined without a hook). */
  auth: unknown;
  req: Request;
  res: Response;
}

export type HandlerResult =
  | {
      status?: number;
      data: unknown;
      /** Sent as `ETag: "<revision>"`. */
      revision?: number;
      /** For lists: rendered beside `data` as `nextCursor`. */
      nextCursor?: string | null;
      headers?: Record<string, string>;
    }
  | { status: 204; headers?: Record<string, string> };

export interface RouteDefinition<R extends RouteRequest = RouteRequest> {
  method: HttpMethod;
  /** OpenAPI-style template under /v1, for example `/v1/teams/{team}/things/{thingId}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  auth: RouteAuth;
  request?: R;
  responses: Record<number, RouteResponse>;
  /** Return a result, or `undefined` only after writing the response yourself through `ctx.res`. */
  handler: (ctx: RouteContext<R>) => Promise<HandlerResult | undefined>;
}

/** A route of any request shape, as the app and the OpenAPI builder hold them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRouteDefinition = RouteDefinition<any>;

const PATH_PARAMETER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export function pathParameterNames(path: string): string[] {
  return [...path.matchAll(PATH_PARAMETER)].map((m) => m[1]!);
}

/** `/v1/teams/{team}` → `/v1/teams/:team` (express 5 / path-to-regexp syntax). */
export function toExpressPath(path: string): string {
  return path.replace(PATH_PARAMETER, ':$1');
}

export class RouteDefinitionError extends Error {
  constructor(route: { method: string; path: string }, problem: string) {
    super(`route ${route.method.toUpperCase()} ${route.path}: ${problem}`);
    this.name = 'RouteDefinitionError';
  }
}

function strictBody(body: AnyObjectSchema): AnyObjectSchema {
  if (isStrictObject(body)) return body;
  const strict = body.strict();
  // `.strict()` makes a new schema without the original's metadata; keep its description, not its id, since
  // the non-strict original may be a named component elsewhere.
  const meta = z.globalRegistry.get(body);
  if (meta) {
    const { id: _id, ...rest } = meta;
    return strict.meta(rest) as AnyObjectSchema;
  }
  return strict;
}

/**
 * The one way to add a `/v1` route: the same zod schemas validate requests and produce the OpenAPI document.
 * Definition mistakes (a path parameter without a schema, a nested object that would drop unknown fields)
 * throw here, at startup, not on the first request.
 */
export function defineRoute<R extends RouteRequest>(definition: RouteDefinition<R>): RouteDefinition<R> {
  if (!definition.path.startsWith('/v1/')) throw new RouteDefinitionError(definition, 'path must start with /v1/');
  const names = pathParameterNames(definition.path);
  const paramShape = definition.request?.params ? definitionOf(definition.request.params).shape ?? {} : {};
  for (const name of names) {
    if (!(name in paramShape)) throw new RouteDefinitionError(definition, `path parameter {${name}} needs a schema in request.params`);
  }
  for (const name of Object.keys(paramShape)) {
    if (!names.includes(name)) throw new RouteDefinitionError(definition, `request.params.${name} is not in the path`);
  }
  const body = definition.request?.body;
  if (body) {
    const loose = nonStrictNestedObjects(body);
    if (loose.length > 0) {
      throw new RouteDefinitionError(definition, `body objects at ${loose.join(', ')} must be z.strictObject (unknown fields are refused)`);
    }
  }
  if (Object.keys(definition.responses).length === 0) throw new RouteDefinitionError(definition, 'declare at least one response');
  const request = definition.request && body ? { ...definition.request, body: strictBody(body) } : definition.request;
  return { ...definition, ...(request ? { request } : {}) } as RouteDefinition<R>;
}
