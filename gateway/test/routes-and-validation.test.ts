import { accessLogFor, startEdge, type RunningEdge, readJson } from './support';
import { testRoutes } from './routes';

let edge: RunningEdge;
beforeAll(async () => {
  edge = await startEdge({ routes: testRoutes });
});
afterAll(() => edge.close());

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

describe('response envelope', () => {
  it('wraps data and sends the revision as a quoted ETag', async () => {
    const response = await fetch(edge.url('/v1/teams/acme/things/7'));
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe('"3"');
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await readJson(response)).toEqual({ data: { team: { kind: 'slug', slug: 'acme' }, thingId: 7 } });
  });

  it('accepts a team id as well as a slug', async () => {
    const id = '6F9619FF-8B86-4011-B42D-00CF4FC964FF';
    const body = await readJson(await fetch(edge.url(`/v1/teams/${id}/things/1`)));
    expect(body.data.team).toEqual({ kind: 'id', id: id.toLowerCase() });
  });

  it('answers 404 in the error shape for a team reference that cannot exist', async () => {
    const response = await fetch(edge.url('/v1/teams/Not_A_Team/things/1'));
    expect(response.status).toBe(404);
    expect((await readJson(response)).error.code).toBe('not_found');
  });

  it('uses the status the handler returns', async () => {
    const response = await fetch(edge.url('/v1/things'), { method: 'POST', ...json({ name: 'a', count: 2 }) });
    expect(response.status).toBe(201);
    expect(response.headers.get('etag')).toBe('"1"');
    expect(await readJson(response)).toEqual({ data: { id: 1, name: 'a', count: 2 } });
  });

  it('sends no body for 204', async () => {
    const response = await fetch(edge.url('/v1/things/3'), { method: 'DELETE' });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
  });
});

describe('If-Match', () => {
  const patch = (headers: Record<string, string>, body: unknown = { name: 'new' }) =>
    fetch(edge.url('/v1/teams/acme/things/7'), { method: 'PATCH', ...json(body, headers) });

  it('answers 428 precondition_required when If-Match is missing', async () => {
    const response = await patch({});
    expect(response.status).toBe(428);
    expect((await readJson(response)).error.code).toBe('precondition_required');
  });

  it('answers 400 for a malformed If-Match', async () => {
    for (const value of ['abc', '"3', '*', '"3", "4"']) {
      const response = await patch({ 'if-match': value });
      expect(response.status).toBe(400);
      const body = await readJson(response);
      expect(body.error.code).toBe('invalid_request');
      expect(body.error.fields).toEqual([{ field: 'If-Match', problem: expect.any(String) }]);
    }
  });

  it('answers 412 precondition_failed when the revision is stale', async () => {
    const response = await patch({ 'if-match': '"2"' });
    expect(response.status).toBe(412);
    expect((await readJson(response)).error.code).toBe('precondition_failed');
  });

  it('accepts "3", W/"3" and 3 for the current revision and returns the new ETag', async () => {
    for (const value of ['"3"', 'W/"3"', '3']) {
      const response = await patch({ 'if-match': value });
      expect(response.status).toBe(200);
      expect(response.headers.get('etag')).toBe('"4"');
      expect(await readJson(response)).toEqual({ data: { id: 7, name: 'new' } });
    }
  });
});

describe('validation', () => {
  it('names every bad field with its dotted path, without the part prefix', async () => {
    const response = await fetch(edge.url('/v1/teams/acme/things/7'), {
      method: 'PATCH',
      ...json({ name: 42, enabled: 'yes', servers: [{ prefix: 'ok' }, { prefix: 'NOT OK' }] }, { 'if-match': '"3"' }),
    });
    expect(response.status).toBe(400);
    const body = await readJson(response);
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.message).toMatch(/body/);
    expect(body.error.fields.map((f: { field: string }) => f.field).sort()).toEqual(['enabled', 'name', 'servers.1.prefix']);
    expect(body.error.fields.find((f: { field: string }) => f.field === 'servers.1.prefix').problem).toBe('lowercase letters only');
  });

  it('refuses unknown fields on a write, at the top level and nested', async () => {
    const response = await fetch(edge.url('/v1/teams/acme/things/7'), {
      method: 'PATCH',
      ...json({ name: 'x', colour: 'red', servers: [{ prefix: 'a', weight: 1 }] }, { 'if-match': '"3"' }),
    });
    expect(response.status).toBe(400);
    const fields = (await readJson(response)).error.fields;
    expect(fields).toEqual(
      expect.arrayContaining([
        { field: 'colour', problem: 'unknown field' },
        { field: 'servers.0.weight', problem: 'unknown field' },
      ]),
    );
  });

  it('reports missing required fields', async () => {
    const response = await fetch(edge.url('/v1/things'), { method: 'POST', ...json({ count: 1.5 }) });
    expect(response.status).toBe(400);
    const fields = (await readJson(response)).error.fields;
    expect(fields).toEqual(
      expect.arrayContaining([
        { field: 'name', problem: 'is required' },
        { field: 'count', problem: expect.stringMatching(/int/i) },
      ]),
    );
  });

  it('reports a missing body by its required fields', async () => {
    const response = await fetch(edge.url('/v1/things'), { method: 'POST' });
    expect(response.status).toBe(400);
    expect((await readJson(response)).error.fields).toEqual(expect.arrayContaining([{ field: 'name', problem: 'is required' }]));
  });

  it('refuses a JSON body that is not an object', async () => {
    const response = await fetch(edge.url('/v1/things'), { method: 'POST', ...json([1, 2]) });
    expect(response.status).toBe(400);
    expect((await readJson(response)).error.fields).toEqual([{ field: 'body', problem: expect.any(String) }]);
  });

  it('validates path parameters and says which part was wrong', async () => {
    const response = await fetch(edge.url('/v1/teams/acme/things/zero'));
    expect(response.status).toBe(400);
    const body = await readJson(response);
    expect(body.error.message).toMatch(/path parameters/);
    expect(body.error.fields).toEqual([{ field: 'thingId', problem: expect.any(String) }]);
  });

  it('refuses a body on an operation that takes none', async () => {
    const response = await fetch(edge.url('/v1/things/3'), { method: 'DELETE', ...json({ force: true }) });
    expect(response.status).toBe(400);
    expect((await readJson(response)).error.fields).toEqual([{ field: 'body', problem: expect.any(String) }]);
  });
});

describe('query parameters and pagination', () => {
  it('coerces numbers, booleans and arrays and applies the default page size', async () => {
    const response = await fetch(edge.url('/v1/things?limit=2&enabled=false&tag=a&tag=b'));
    expect(response.status).toBe(200);
    const body = await readJson(response);
    expect(body.data).toHaveLength(2);
    expect(body.data[0]).toEqual({ id: 1, name: 'thing 1', enabled: false, tags: ['a', 'b'] });
    expect(typeof body.nextCursor).toBe('string');

    const single = await readJson(await fetch(edge.url('/v1/things?tag=only&limit=1')));
    expect(single.data[0].tags).toEqual(['only']);
  });

  it('follows nextCursor to the last page, where it is null', async () => {
    const first = await readJson(await fetch(edge.url('/v1/things?limit=3')));
    expect(first.data.map((t: { id: number }) => t.id)).toEqual([1, 2, 3]);
    const second = await readJson(await fetch(edge.url(`/v1/things?limit=2&cursor=${first.nextCursor}`)));
    expect(second.data.map((t: { id: number }) => t.id)).toEqual([4, 5]);
    expect(second.nextCursor).toBeNull();
  });

  it('refuses a limit out of range and a malformed cursor, naming the parameter', async () => {
    const tooMany = await fetch(edge.url('/v1/things?limit=201'));
    expect(tooMany.status).toBe(400);
    const tooManyBody = await readJson(tooMany);
    expect(tooManyBody.error.fields).toEqual([{ field: 'limit', problem: expect.any(String) }]);
    expect(tooManyBody.error.message).toMatch(/query/);

    for (const cursor of ['not*base64', Buffer.from('{"before":1}').toString('base64url'), 'bm90IGpzb24']) {
      const bad = await fetch(edge.url(`/v1/things?cursor=${cursor}`));
      expect(bad.status).toBe(400);
      expect((await readJson(bad)).error.fields).toEqual([{ field: 'cursor', problem: 'malformed cursor' }]);
    }
  });

  it('never logs the query string', async () => {
    const response = await fetch(edge.url('/v1/things?limit=1&cursor=c2VjcmV0LXRva2Vu'), { headers: { 'x-request-id': 'query-log-test-1' } });
    expect(response.status).toBe(400);
    const line = await accessLogFor(edge, 'query-log-test-1');
    expect(line.route).toBe('/v1/things');
    expect(JSON.stringify(edge.lines)).not.toContain('c2VjcmV0LXRva2Vu');
  });
});

describe('bodies and content types', () => {
  it('answers 413 payload_too_large above the body limit', async () => {
    const response = await fetch(edge.url('/v1/things'), { method: 'POST', ...json({ name: 'x'.repeat(2000), count: 1 }) });
    expect(response.status).toBe(413);
    const body = await readJson(response);
    expect(body.error.code).toBe('payload_too_large');
    expect(body.error.requestId).toBe(response.headers.get('x-request-id'));
  });

  it('answers 415 unsupported_media_type for a body that is not JSON', async () => {
    const response = await fetch(edge.url('/v1/things'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=a&count=1',
    });
    expect(response.status).toBe(415);
    expect((await readJson(response)).error.code).toBe('unsupported_media_type');
  });

  it('accepts application/json with a charset', async () => {
    const response = await fetch(edge.url('/v1/things'), {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ name: 'a', count: 1 }),
    });
    expect(response.status).toBe(201);
  });

  it('answers 400 invalid_request for malformed JSON, without echoing the parser message', async () => {
    const response = await fetch(edge.url('/v1/things'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name": "a", ',
    });
    expect(response.status).toBe(400);
    const body = await readJson(response);
    expect(body.error).toEqual({ code: 'invalid_request', message: 'The request body is not valid JSON', requestId: expect.any(String) });
  });
});
