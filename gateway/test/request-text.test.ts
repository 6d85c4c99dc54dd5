import { z } from 'zod';
import { AppError } from '@platform/runtime';
import type { Caller } from '../src/auth/caller';
import type { EdgeDeps } from '../src/edge-deps';
import { callRoutes } from '../src/routes/calls';
import { defineRoute } from '../src/route';
import { gatewayRoutes } from '../src/routes/gateways';
import { NUL_PROBLEM, nulFieldErrors, textSchema, TIMESTAMP_RANGE_PROBLEM, timestampSchema } from '../src/validation/text';
import { readJson, startEdge, type RunningEdge } from './support';

const TEAM_ID = '6f9619ff-8b86-4011-b42d-00cf4fc964ff';
const GATEWAY_ID = '0b7e3a52-8f1f-4c5e-9d7a-2f1b3c4d5e6f';

/**
 * Strings PostgreSQL cannot store or compare (a NUL) and instants it cannot read (year 0000 and beyond 9999) are
 * refused at the edge as field errors, not passed on to fail as a 500. The routes run with their real schemas in
 * front of a catalog that only notes what reached it (a conflict answer proves a request got through).
 */
describe('request text and timestamps', () => {
  let edge: RunningEdge;
  const reached: Record<string, unknown>[] = [];
  const noted = async (request: Record<string, unknown>) => {
    reached.push(request);
    throw AppError.conflict('noted by the test');
  };
  const catalog = {
    createGateway: noted,
    updateGateway: noted,
    listCalls: async (request: Record<string, unknown>) => {
      reached.push(request);
      return { calls: [], page: { nextCursor: '' } };
    },
  };
  const deps = { clients: { catalog }, settings: { appUrl: 'https://platform.example.test' } } as unknown as EdgeDeps;
  const caller = { credential: 'session', team: { team: { id: TEAM_ID, slug: 'acme' }, role: 'owner', via: 'member' }, clientIp: '127.0.0.1' } as unknown as Caller;

  beforeAll(async () => {
    edge = await startEdge({ routes: [...gatewayRoutes(deps), ...callRoutes(deps)], authenticate: async () => caller });
  });
  afterAll(() => edge.close());
  beforeEach(() => {
    reached.length = 0;
  });

  const send = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(edge.url(path), {
      method,
      headers: { 'content-type': 'application/json', 'if-match': '"1"' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: await readJson(response) };
  };
  const fieldsOf = (body: { error: { fields: { field: string; problem: string }[] } }) => body.error.fields;

  it('refuses a gateway name holding a NUL on create and on change, naming the field', async () => {
    const created = await send('POST', '/v1/teams/acme/gateways', { slug: 'tools', name: 'a\u0000b' });
    expect(created.status).toBe(400);
    expect(created.body.error.code).toBe('invalid_request');
    expect(fieldsOf(created.body)).toEqual([{ field: 'name', problem: NUL_PROBLEM }]);

    const changed = await send('PATCH', `/v1/teams/acme/gateways/${GATEWAY_ID}`, { name: 'a\u0000b', servers: [{ serverId: GATEWAY_ID, prefix: 'p\u0000' }] });
    expect(changed.status).toBe(400);
    expect(fieldsOf(changed.body)).toEqual([
      { field: 'name', problem: NUL_PROBLEM },
      { field: 'servers.0.prefix', problem: NUL_PROBLEM },
    ]);
    expect(reached).toEqual([]);

    // Names without one get through, trimmed as before.
    expect((await send('POST', '/v1/teams/acme/gateways', { slug: 'tools', name: ' Tools ' })).status).toBe(409);
    expect((await send('PATCH', `/v1/teams/acme/gateways/${GATEWAY_ID}`, { name: 'Tools \u{1F600}' })).status).toBe(409);
    expect(reached.map((request) => request.name)).toEqual(['Tools', 'Tools \u{1F600}']);
  });

  it.each([
    ['since=0000-01-01T00:00:00Z', 'since', TIMESTAMP_RANGE_PROBLEM],
    ['until=0000-01-01T00:00:00Z', 'until', TIMESTAMP_RANGE_PROBLEM],
    // Year 0001 written, year 0 in UTC; year 9999 written, year 10000 in UTC.
    ['since=0001-01-01T00:00:00%2B01:00', 'since', TIMESTAMP_RANGE_PROBLEM],
    ['until=9999-12-31T23:30:00-01:00', 'until', TIMESTAMP_RANGE_PROBLEM],
    ['method=tools%00call', 'method', NUL_PROBLEM],
  ])('refuses the calls filter %s with a field error', async (query, field, problem) => {
    const response = await send('GET', `/v1/teams/acme/calls?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_request');
    expect(fieldsOf(response.body)).toEqual([{ field, problem }]);
    expect(reached).toEqual([]);
  });

  it('passes the first and last instants of the years 0001 to 9999 on to the catalog', async () => {
    const response = await send('GET', '/v1/teams/acme/calls?since=0001-01-01T00:00:00Z&until=9999-12-31T23:59:59.999Z&method=tools%2Fcall');
    expect(response.status).toBe(200);
    expect(reached).toEqual([
      expect.objectContaining({ since: '0001-01-01T00:00:00.000Z', until: '9999-12-31T23:59:59.999Z', method: 'tools/call' }),
    ]);
  });
});

describe('text schema helpers', () => {
  it('keep the string checks chained after them', () => {
    const name = textSchema().trim().min(1).max(3);
    expect(name.parse(' ab ')).toBe('ab');
    expect(name.safeParse('abcd').success).toBe(false);
    expect(name.safeParse('a\u0000').error?.issues.map((issue) => issue.message)).toEqual([NUL_PROBLEM]);
    expect(timestampSchema().optional().safeParse(undefined).success).toBe(true);
    expect(timestampSchema().safeParse('2026-13-01T00:00:00Z').success).toBe(false);
  });

  it('name every string and key holding a NUL in a parsed part, by its dotted path', () => {
    const body = { name: 'a\u0000', servers: [{ prefix: 'ok' }, { prefix: '\u0000' }], headers: { 'X-\u0000': 'v' }, count: 3 };
    expect(nulFieldErrors(body, 'body')).toEqual([
      { field: 'name', problem: NUL_PROBLEM },
      { field: 'servers.1.prefix', problem: NUL_PROBLEM },
      { field: 'headers.X-\u0000', problem: NUL_PROBLEM },
    ]);
    expect(nulFieldErrors('\u0000', 'body')).toEqual([{ field: 'body', problem: NUL_PROBLEM }]);
    expect(nulFieldErrors({ fine: ['a', 'b'], n: null }, 'query')).toEqual([]);
    // Usable on whatever a schema produced.
    expect(nulFieldErrors(z.object({ tags: z.array(z.string()) }).parse({ tags: ['x', 'y\u0000'] }), 'query')).toEqual([
      { field: 'tags.1', problem: NUL_PROBLEM },
    ]);
  });
});

describe('NUL refused on every route', () => {
  let edge: RunningEdge;
  const reached: unknown[] = [];
  // A route whose schema knows nothing of NUL (a plain z.string()): the edge refuses it all the same.
  const noteRoute = defineRoute({
    method: 'post',
    path: '/v1/notes',
    operationId: 'createNote',
    summary: 'A test route',
    tags: ['test'],
    auth: { callers: 'anyone signed in' },
    request: { body: z.object({ note: z.string(), tags: z.array(z.string()).optional() }) },
    responses: { 201: { description: 'Noted' } },
    handler: async (ctx) => {
      reached.push(ctx.body);
      return { status: 201, data: ctx.body };
    },
  });

  beforeAll(async () => {
    const caller = { credential: 'session', clientIp: '127.0.0.1' } as unknown as Caller;
    edge = await startEdge({ routes: [noteRoute], authenticate: async () => caller });
  });
  afterAll(() => edge.close());

  it('answers 400 naming each field, and the handler never runs', async () => {
    const response = await fetch(edge.url('/v1/notes'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ note: 'a\u0000b', tags: ['ok', '\u0000'] }) });
    const body = (await readJson(response)) as { error: { code: string; fields: unknown[] } };
    expect(response.status).toBe(400);
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.fields).toEqual([
      { field: 'note', problem: NUL_PROBLEM },
      { field: 'tags.1', problem: NUL_PROBLEM },
    ]);
    expect(reached).toEqual([]);
    const fine = await fetch(edge.url('/v1/notes'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ note: 'ab' }) });
    expect(fine.status).toBe(201);
    expect(reached).toEqual([{ note: 'ab' }]);
  });
});
