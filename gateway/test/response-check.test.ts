import { z } from 'zod';
import { defineRoute, pageQuery, pageResponse, type AnyRouteDefinition } from '../src';
import type { HandlerResult } from '../src/route';
import { undeclaredFields } from '../src/validation/zod-introspection';
import { readJson, startEdge, type RunningEdge } from './support';

/** CHECK_RESPONSES: every /v1 answer held to its route's documented status and schema. */
const member = z.object({ id: z.string(), role: z.enum(['owner', 'member']), since: z.string().nullable() });
const team = z.object({ slug: z.string(), members: z.array(member), labels: z.record(z.string(), z.object({ text: z.string() })) });

/** What each route answers is set by the test, so one route can answer on or off its schema. */
let answer: { status?: number; data?: unknown; nextCursor?: string | null } = { data: {} };

const routes: AnyRouteDefinition[] = [
  defineRoute({
    method: 'get',
    path: '/v1/checked',
    operationId: 'getChecked',
    summary: 'A team-shaped answer',
    tags: ['checked'],
    auth: { callers: 'anyone' },
    responses: { 200: { description: 'The team', schema: team }, 202: { description: 'Accepted, nothing to show' } },
    handler: async () => answer as HandlerResult,
  }),
  defineRoute({
    method: 'get',
    path: '/v1/checked-list',
    operationId: 'listChecked',
    summary: 'A page of members',
    tags: ['checked'],
    auth: { callers: 'anyone' },
    request: { query: pageQuery },
    responses: { 200: { description: 'Members', schema: pageResponse(member) } },
    handler: async () => answer as HandlerResult,
  }),
];

const goodTeam = { slug: 'acme', members: [{ id: 'p1', role: 'owner', since: null }], labels: { blue: { text: 'Blue' } } };

describe('response check (CHECK_RESPONSES)', () => {
  let checked: RunningEdge;
  let unchecked: RunningEdge;
  beforeAll(async () => {
    checked = await startEdge({
      routes,
      config: { appUrl: 'https://platform.example.test', bodyLimitBytes: 1024, checkResponses: true },
    });
    unchecked = await startEdge({ routes });
  });
  afterAll(async () => {
    await checked.close();
    await unchecked.close();
  });

  it('sends an answer of the documented shape unchanged', async () => {
    answer = { data: goodTeam };
    const response = await fetch(checked.url('/v1/checked'));
    expect(response.status).toBe(200);
    expect(await readJson(response)).toEqual({ data: goodTeam });

    answer = { data: [goodTeam.members[0]], nextCursor: null };
    const page = await fetch(checked.url('/v1/checked-list'));
    expect([page.status, (await readJson(page)).data]).toEqual([200, [goodTeam.members[0]]]);
  });

  it.each([
    ['an undeclared field, at any depth', { ...goodTeam, members: [{ ...goodTeam.members[0], passwordHash: 'x' }] }, 'members.0.passwordHash: not declared'],
    ['an undeclared field at the top', { ...goodTeam, secret: 's' }, 'secret: not declared'],
    ['an undeclared field in a record value', { ...goodTeam, labels: { blue: { text: 'Blue', colour: '#00f' } } }, 'labels.blue.colour: not declared'],
    ['a wrong type', { ...goodTeam, slug: 7 }, 'slug: Invalid input'],
    ['a missing field', { slug: 'acme', labels: {} }, 'members: Invalid input'],
    ['a value outside its enum', { ...goodTeam, members: [{ ...goodTeam.members[0], role: 'king' }] }, 'members.0.role: Invalid option'],
  ])('fails an answer with %s: 500, logged with the deviation, and nothing of the answer sent', async (_case, data, problem) => {
    answer = { data };
    const response = await fetch(checked.url('/v1/checked'));
    expect(response.status).toBe(500);
    const body = await readJson(response);
    expect(body.error.code).toBe('internal');
    expect(JSON.stringify(body)).not.toContain('acme');
    const logged = checked.lines.find((line) => line.level === 'error' && JSON.stringify(line).includes(problem));
    expect(logged).toBeDefined();
    expect(JSON.stringify(logged)).toContain('getChecked answered 200 off its schema');

    // Without the check the same answer goes out as it is.
    const plain = await fetch(unchecked.url('/v1/checked'));
    expect([plain.status, (await readJson(plain)).data]).toEqual([200, data]);
  });

  it.each([
    ['a page without its nextCursor', '/v1/checked-list', { data: [] }, 'nextCursor: Invalid input'],
    ['a nextCursor beside an answer that is not a list', '/v1/checked', { data: goodTeam, nextCursor: 'abc' }, 'nextCursor: not declared (not a list)'],
    ['a body on a status declared without one', '/v1/checked', { status: 202, data: goodTeam }, 'answered 202 with a body it does not declare'],
    ['no body on a status that declares one', '/v1/checked', { status: 200 }, 'answered 200 without the body it declares'],
  ])('checks the body as it is sent: fails %s', async (_case, path, result, problem) => {
    answer = result as typeof answer;
    expect((await fetch(checked.url(path))).status).toBe(500);
    expect(checked.lines.some((line) => JSON.stringify(line).includes(problem))).toBe(true);
  });

  it('fails a status the route does not declare, and a page with an undeclared field in an item', async () => {
    answer = { status: 203, data: goodTeam };
    expect((await fetch(checked.url('/v1/checked'))).status).toBe(500);
    expect(checked.lines.some((line) => JSON.stringify(line).includes('getChecked answered 203, a status it does not declare'))).toBe(true);

    answer = { data: [{ ...goodTeam.members[0], email: 'a@example.test' }], nextCursor: null };
    expect((await fetch(checked.url('/v1/checked-list'))).status).toBe(500);
    expect(checked.lines.some((line) => JSON.stringify(line).includes('data.0.email: not declared'))).toBe(true);
  });
});

describe('undeclaredFields', () => {
  it('judges a union by its best-fitting option and lets a catchall object take any field', () => {
    const shape = z.union([z.object({ kind: z.literal('a'), a: z.string() }), z.object({ kind: z.literal('b'), b: z.string() })]);
    expect(undeclaredFields(shape, { kind: 'b', b: 'x' })).toEqual([]);
    expect(undeclaredFields(shape, { kind: 'b', b: 'x', c: 1 })).toEqual(['c']);
    expect(undeclaredFields(z.looseObject({ a: z.string() }), { a: 'x', extra: 1 })).toEqual([]);
    expect(undeclaredFields(z.object({ a: z.string() }).nullable(), null)).toEqual([]);
    expect(undeclaredFields(z.object({ list: z.array(z.object({ a: z.string() })).optional() }), { list: [{ a: 'x' }, { a: 'y', b: 2 }] })).toEqual(['list.1.b']);
  });

  it('finds a field no option of the value declares, beside non-object options, in discriminated unions, lazy, intersections and tuples', () => {
    const item = z.object({ id: z.string() });
    expect(undeclaredFields(z.union([item, z.null()]), { id: 'x', secret: 's' })).toEqual(['secret']);
    expect(undeclaredFields(z.array(z.union([z.string(), item])), ['a', { id: 'x', secret: 's' }])).toEqual(['1.secret']);
    // A field only another option declares: the value parses as option a, which does not name token.
    const tagged = z.discriminatedUnion('kind', [z.object({ kind: z.literal('a') }), z.object({ kind: z.literal('b'), token: z.string() })]);
    expect(undeclaredFields(tagged, { kind: 'a', token: 't' })).toEqual(['token']);
    expect(undeclaredFields(tagged, { kind: 'b', token: 't' })).toEqual([]);
    // An option that takes anything declares anything.
    expect(undeclaredFields(z.union([item, z.unknown()]), { id: 'x', more: 1 })).toEqual([]);
    type Node = { name: string; children: Node[] };
    const node: z.ZodType<Node> = z.lazy(() => z.object({ name: z.string(), children: z.array(node) }));
    expect(undeclaredFields(node, { name: 'a', children: [{ name: 'b', children: [], extra: 1 }] })).toEqual(['children.0.extra']);
    const both = z.intersection(z.object({ a: z.string() }), z.object({ b: z.string() }));
    expect(undeclaredFields(both, { a: 'x', b: 'y', c: 'z' })).toEqual(['c']);
    expect(undeclaredFields(z.tuple([item], z.object({ n: z.number() })), [{ id: 'x', q: 1 }, { n: 1, r: 2 }])).toEqual(['0.q', '1.r']);
  });
});
