import { openApiProblems } from '@platform/test';
import { startEdge, type RunningEdge, readJson } from './support';
import { testRoutes } from './routes';

let edge: RunningEdge;
let document: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
beforeAll(async () => {
  edge = await startEdge({ routes: testRoutes });
  const response = await fetch(edge.url('/v1/openapi.json'));
  expect(response.status).toBe(200);
  document = await readJson(response);
});
afterAll(() => edge.close());

/** Every `$ref` in the document, to check each one resolves. */
function refsIn(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refsIn(v, found));
  else if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string') found.push(child);
      else refsIn(child, found);
    }
  }
  return found;
}

describe('GET /v1/openapi.json', () => {
  it('validates against the OpenAPI 3.1 schema', async () => {
    expect(await openApiProblems(document)).toEqual([]);
  });

  it('is an OpenAPI 3.1 document titled with the instance name, served from the app URL', () => {
    expect(document.openapi).toMatch(/^3\.1\.\d+$/);
    expect(document.info.title).toBe('Test Platform');
    expect(typeof document.info.version).toBe('string');
    expect(document.servers).toEqual([{ url: 'https://platform.example.test' }]);
    expect(document.components.schemas.Error).toBeDefined();
  });

  it('lists every defined route under its OpenAPI path with its operationId', () => {
    for (const route of testRoutes) {
      const operation = document.paths[route.path]?.[route.method];
      expect(operation).toBeDefined();
      expect(operation.operationId).toBe(route.operationId);
      expect(operation.summary).toBe(route.summary);
      expect(operation.tags).toEqual(route.tags);
      expect(operation.description).toContain(`Caller: ${route.auth.callers}.`);
      expect(operation['x-callers']).toBe(route.auth.callers);
      expect(operation.responses.default.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    }
    const operationIds = Object.values(document.paths).flatMap((item) => Object.values(item as object).map((op) => op.operationId));
    expect(new Set(operationIds).size).toBe(operationIds.length);
  });

  it('describes path and query parameters with their types', () => {
    const get = document.paths['/v1/teams/{team}/things/{thingId}'].get;
    expect(get.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'team', in: 'path', required: true, schema: expect.objectContaining({ type: 'string' }) }),
        expect.objectContaining({ name: 'thingId', in: 'path', required: true, schema: expect.objectContaining({ type: 'integer', minimum: 1 }) }),
      ]),
    );
    const list = document.paths['/v1/things'].get;
    const limit = list.parameters.find((p: { name: string }) => p.name === 'limit');
    expect(limit).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } });
    expect(list.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['cursor', 'enabled', 'limit', 'tag']);
  });

  it('describes request bodies as strict JSON objects', () => {
    const body = document.paths['/v1/things'].post.requestBody;
    expect(body.required).toBe(true);
    const schema = body.content['application/json'].schema;
    expect(schema).toMatchObject({ type: 'object', required: ['name', 'count'], additionalProperties: false });
    expect(schema.properties.count.type).toBe('integer');
    const patchBody = document.paths['/v1/teams/{team}/things/{thingId}'].patch.requestBody;
    expect(patchBody.required).toBe(false);
    expect(patchBody.content['application/json'].schema.properties.servers.items.additionalProperties).toBe(false);
  });

  it('shows If-Match, ETag, 412 and 428 where revisions are used', () => {
    const patch = document.paths['/v1/teams/{team}/things/{thingId}'].patch;
    expect(patch.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'If-Match', in: 'header', required: true })]));
    expect(patch.responses['200'].headers.ETag).toBeDefined();
    expect(patch.responses['412']).toBeDefined();
    expect(patch.responses['428']).toBeDefined();
    expect(document.paths['/v1/teams/{team}/things/{thingId}'].get.responses['200'].headers.ETag).toBeDefined();
    expect(document.paths['/v1/things'].get.responses['200'].headers).toBeUndefined();
  });

  it('wraps responses in the data envelope, and lists as data plus nextCursor', () => {
    const created = document.paths['/v1/things'].post.responses['201'].content['application/json'].schema;
    expect(created).toEqual({ type: 'object', properties: { data: { $ref: '#/components/schemas/Thing' } }, required: ['data'] });
    const page = document.paths['/v1/things'].get.responses['200'].content['application/json'].schema;
    expect(page.properties.data).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Thing' } });
    expect(page.properties.nextCursor.type).toEqual(['string', 'null']);
    expect(document.paths['/v1/things'].post.responses['409'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    expect(document.paths['/v1/things/{thingId}'].delete.responses['204'].content).toBeUndefined();
  });

  it('has only references that resolve and path templates whose parameters are all declared', () => {
    for (const ref of refsIn(document)) {
      const [, , section, name] = ref.split('/');
      expect(document.components[section!]?.[name!]).toBeDefined();
    }
    for (const [path, item] of Object.entries(document.paths)) {
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      for (const operation of Object.values(item as object)) {
        const declared = operation.parameters?.filter((p: { in: string }) => p.in === 'path').map((p: { name: string }) => p.name) ?? [];
        expect(declared.sort()).toEqual([...names].sort());
      }
    }
  });
});
