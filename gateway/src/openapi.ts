import { extendZodWithOpenApi, OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { errorBodySchema } from './error-body';
import { isPageResponseSchema } from './pagination';
import type { AnyRouteDefinition, RouteResponse } from './route';

// Enables `.openapi(...)` on zod schemas for route authors who need parameter-level metadata.
extendZodWithOpenApi(z);

/** The OpenAPI 3.1 document object (JSON-serialisable). */
export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

export interface OpenApiInfo {
  title: string;
  appUrl: string;
  version?: string;
}

const ifMatchHeaders = z.object({
  'If-Match': z.string().meta({ description: 'The revision from the ETag of the resource read, for example "3".', example: '"3"' }),
});

const fingerprintIfMatchHeaders = z.object({
  'If-Match': z
    .string()
    .optional()
    .meta({ description: 'The fingerprint read, quoted: only that definition is approved. Absent or * approves the current one.', example: '"9f86d081"' }),
});

const fingerprintEtagHeader = {
  ETag: { description: 'The fingerprint approved, quoted.', schema: { type: 'string' as const, example: '"9f86d081"' } },
};

const etagHeader = { ETag: { description: 'The revision of the resource, as a quoted integer.', schema: { type: 'string' as const, example: '"3"' } } };

function errorResponse(description: string): ResponseConfig {
  return { description, content: { 'application/json': { schema: errorBodySchema } } };
}

function successResponse(route: AnyRouteDefinition, status: number, response: RouteResponse): ResponseConfig {
  const headers = route.request?.headers;
  const success = status >= 200 && status < 300 && status !== 204;
  const withEtag = response.etag ?? (headers?.ifMatch === true && success);
  const config: ResponseConfig = { description: response.description };
  if (withEtag) config.headers = etagHeader;
  else if (headers?.ifMatchFingerprint && success) config.headers = fingerprintEtagHeader;
  if (response.schema) {
    const body = isPageResponseSchema(response.schema) ? response.schema : z.object({ data: response.schema });
    config.content = { 'application/json': { schema: body } };
  }
  return config;
}

function responsesOf(route: AnyRouteDefinition): Record<string, ResponseConfig> {
  const responses: Record<string, ResponseConfig> = {};
  for (const [status, response] of Object.entries(route.responses)) {
    const code = Number(status);
    responses[status] = code >= 400 ? errorResponse(response.description) : successResponse(route, code, response);
  }
  const request = route.request ?? {};
  if ((request.params || request.query || request.body) && !responses['400']) {
    responses['400'] = errorResponse('Invalid request: `error.fields` names every invalid field.');
  }
  if (request.headers?.ifMatch) {
    responses['412'] ??= errorResponse('Precondition failed: the If-Match revision is stale.');
    responses['428'] ??= errorResponse('Precondition required: If-Match is missing.');
  }
  if (request.headers?.ifMatchFingerprint) {
    responses['412'] ??= errorResponse('Precondition failed: the definition is no longer the one If-Match names.');
  }
  responses.default = errorResponse('Error, in the shared error shape.');
  return responses;
}

function descriptionOf(route: AnyRouteDefinition): string {
  const caller = `Caller: ${route.auth.callers}.`;
  return route.description ? `${route.description}\n\n${caller}` : caller;
}

/** Builds the document from the defined routes; call once at startup (generation is not cheap). */
export function buildOpenApiDocument(routes: readonly AnyRouteDefinition[], info: OpenApiInfo): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  for (const route of routes) {
    const request = route.request ?? {};
    const body = request.body;
    registry.registerPath({
      method: route.method,
      path: route.path,
      operationId: route.operationId,
      summary: route.summary,
      description: descriptionOf(route),
      tags: route.tags,
      'x-callers': route.auth.callers,
      request: {
        ...(request.params ? { params: request.params } : {}),
        ...(request.query ? { query: request.query } : {}),
        ...(request.headers?.ifMatch ? { headers: ifMatchHeaders } : {}),
        ...(request.headers?.ifMatchFingerprint ? { headers: fingerprintIfMatchHeaders } : {}),
        ...(body
          ? { body: { required: !body.safeParse({}).success, content: { 'application/json': { schema: body } } } }
          : {}),
      },
      responses: responsesOf(route),
    });
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version ?? 'v1',
      description: 'Management and public API. Conventions (envelope, errors, ETag/If-Match, pagination): docs/api.md.',
    },
    servers: [{ url: info.appUrl }],
  });
}
