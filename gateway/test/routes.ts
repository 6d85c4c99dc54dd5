import { z } from 'zod';
import { AppError, decodeCursor, encodeCursor } from '@platform/runtime';
import {
  assertRevision,
  defineRoute,
  pageQuery,
  pageResponse,
  parseTeamRef,
  teamParam,
  type AnyRouteDefinition,
} from '../src';

/** Routes defined only for the tests: they exercise every convention of the edge. */
const thing = z.object({ id: z.number().int(), name: z.string(), enabled: z.boolean() }).meta({ id: 'Thing' });

export const getTeamThing = defineRoute({
  method: 'get',
  path: '/v1/teams/{team}/things/{thingId}',
  operationId: 'getTeamThing',
  summary: 'Read a thing of a team',
  tags: ['things'],
  auth: { callers: 'team members' },
  request: { params: z.object({ team: teamParam, thingId: z.number().int().min(1) }) },
  responses: { 200: { description: 'The thing', schema: thing, etag: true } },
  handler: async (ctx) => {
    const team = parseTeamRef(ctx.params.team);
    const thingId: number = ctx.params.thingId; // coerced from the path
    return { data: { team, thingId }, revision: 3 };
  },
});

export const updateTeamThing = defineRoute({
  method: 'patch',
  path: '/v1/teams/{team}/things/{thingId}',
  operationId: 'updateTeamThing',
  summary: 'Change a thing of a team',
  tags: ['things'],
  auth: { callers: 'team owners and admins' },
  request: {
    params: z.object({ team: teamParam, thingId: z.number().int().min(1) }),
    headers: { ifMatch: true },
    body: z.object({
      name: z.string().max(10).optional(),
      enabled: z.boolean().optional(),
      servers: z.array(z.strictObject({ prefix: z.string().regex(/^[a-z]+$/, 'lowercase letters only') })).optional(),
    }),
  },
  responses: { 200: { description: 'The changed thing', schema: thing } },
  handler: async (ctx) => {
    const expected: number = ctx.ifMatch;
    assertRevision(expected, 3);
    return { data: { id: ctx.params.thingId, ...ctx.body }, revision: 4 };
  },
});

export const createThing = defineRoute({
  method: 'post',
  path: '/v1/things',
  operationId: 'createThing',
  summary: 'Create a thing',
  description: 'Creates a thing.',
  tags: ['things'],
  auth: { callers: 'platform admins' },
  request: { body: z.object({ name: z.string().min(1), count: z.number().int() }) },
  responses: { 201: { description: 'The new thing', schema: thing }, 409: { description: 'A thing with this name exists' } },
  handler: async (ctx) => ({ status: 201, data: { id: 1, name: ctx.body.name, count: ctx.body.count }, revision: 1 }),
});

const cursorPosition = z.object({ after: z.number().int() });

export const listThings = defineRoute({
  method: 'get',
  path: '/v1/things',
  operationId: 'listThings',
  summary: 'List things',
  tags: ['things'],
  auth: { callers: 'platform admins and auditors' },
  request: { query: pageQuery.extend({ enabled: z.boolean().optional(), tag: z.array(z.string()).optional() }) },
  responses: { 200: { description: 'A page of things', schema: pageResponse(thing) } },
  handler: async (ctx) => {
    const after = ctx.query.cursor ? decodeCursor(ctx.query.cursor, (value) => cursorPosition.safeParse(value).data ?? null).after : 0;
    const ids = Array.from({ length: ctx.query.limit }, (_, i) => after + i + 1);
    return {
      data: ids.map((id) => ({ id, name: `thing ${id}`, enabled: ctx.query.enabled ?? true, tags: ctx.query.tag ?? [] })),
      nextCursor: after + ids.length < 5 ? encodeCursor({ after: after + ids.length }) : null,
    };
  },
});

export const deleteThing = defineRoute({
  method: 'delete',
  path: '/v1/things/{thingId}',
  operationId: 'deleteThing',
  summary: 'Delete a thing',
  tags: ['things'],
  auth: { callers: 'platform admins' },
  request: { params: z.object({ thingId: z.number().int().min(1) }) },
  responses: { 204: { description: 'Deleted' } },
  handler: async () => ({ status: 204 }),
});

export const failUnexpectedly = defineRoute({
  method: 'get',
  path: '/v1/boom',
  operationId: 'boom',
  summary: 'Fails with an unexpected error',
  tags: ['test'],
  auth: { callers: 'anyone' },
  responses: { 200: { description: 'never' } },
  handler: async () => {
    throw new Error('connection to postgres://admin:hunter2@db failed');
  },
});

export const rateLimited = defineRoute({
  method: 'post',
  path: '/v1/slow',
  operationId: 'slow',
  summary: 'Always over the rate limit',
  tags: ['test'],
  auth: { callers: 'anyone' },
  responses: { 200: { description: 'never' } },
  handler: async () => {
    throw new AppError('slow_down', 'Too many requests; retry later', { headers: { 'Retry-After': '30' } });
  },
});

export const testRoutes: AnyRouteDefinition[] = [
  getTeamThing,
  updateTeamThing,
  createThing,
  listThings,
  deleteThing,
  failUnexpectedly,
  rateLimited,
];
