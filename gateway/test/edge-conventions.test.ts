import type { Express } from 'express';
import { metricsRegistry } from '@platform/runtime';
import { accessLogFor, startEdge, type RunningEdge, readJson } from './support';
import { testRoutes } from './routes';

let edge: RunningEdge;
beforeAll(async () => {
  edge = await startEdge({
    routes: testRoutes,
    // Stands in for the OAuth routes a later feature mounts outside /v1.
    mount: (app: Express) => {
      app.post('/oauth/token', (_req, res) => {
        res.json({ ok: true });
      });
      // Answers only after the client has gone away (the abandoned-request case of the access log).
      app.get('/slow', (req, res) => {
        req.socket.once('close', () => setTimeout(() => res.end(), 10));
      });
    },
  });
});
afterAll(() => edge.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('request ids', () => {
  it('echoes a well-formed incoming X-Request-Id and uses it in the access log', async () => {
    const response = await fetch(edge.url('/v1/teams/acme/things/1'), { headers: { 'x-request-id': 'abc.DEF_123-xyz' } });
    expect(response.headers.get('x-request-id')).toBe('abc.DEF_123-xyz');
    const line = await accessLogFor(edge, 'abc.DEF_123-xyz');
    expect(line).toMatchObject({ method: 'GET', route: '/v1/teams/{team}/things/{thingId}', status: 200 });
    expect(typeof line.durationMs).toBe('number');
    expect(JSON.stringify(line)).not.toMatch(/x-request-id|user-agent|acme/i);
  });

  it('logs a request once when it finishes, and as 499 when the client goes away first', async () => {
    await fetch(edge.url('/healthz'), { headers: { 'x-request-id': 'finished-once-1' } });
    await accessLogFor(edge, 'finished-once-1');
    const abandoned = new AbortController();
    const pending = fetch(edge.url('/slow'), { headers: { 'x-request-id': 'abandoned-499-1' }, signal: abandoned.signal });
    setTimeout(() => abandoned.abort(), 50);
    await expect(pending).rejects.toThrow();
    expect(await accessLogFor(edge, 'abandoned-499-1')).toMatchObject({ method: 'GET', status: 499 });
    await new Promise((resolve) => setTimeout(resolve, 50)); // the late res.end() must not log again
    for (const id of ['finished-once-1', 'abandoned-499-1']) {
      expect(edge.lines.filter((l) => l.msg === 'request' && l.requestId === id)).toHaveLength(1);
    }
  });

  it('generates a UUID when none is sent', async () => {
    const response = await fetch(edge.url('/healthz'));
    expect(response.headers.get('x-request-id')).toMatch(UUID);
  });

  it('replaces a malformed incoming id rather than echoing it', async () => {
    for (const bad of ['short', 'has spaces in it', 'x'.repeat(129), 'semi;colon-value', '../../etc/passwd']) {
      const response = await fetch(edge.url('/healthz'), { headers: { 'x-request-id': bad } });
      expect(response.headers.get('x-request-id')).toMatch(UUID);
    }
  });

  it('puts the request id in error bodies', async () => {
    const response = await fetch(edge.url('/v1/nothing-here'), { headers: { 'x-request-id': 'error-body-id-1' } });
    expect((await readJson(response)).error.requestId).toBe('error-body-id-1');
  });
});

describe('unknown routes and methods', () => {
  it('answers 404 not_found in the error shape under /v1', async () => {
    const response = await fetch(edge.url('/v1/does/not/exist'));
    expect(response.status).toBe(404);
    expect(await readJson(response)).toEqual({ error: { code: 'not_found', message: 'No such route', requestId: expect.any(String) } });
  });

  it('answers 404 not_found in the error shape elsewhere', async () => {
    const response = await fetch(edge.url('/favicon.ico'));
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect((await readJson(response)).error.code).toBe('not_found');
  });

  it('answers 405 with Allow when the path exists with other methods', async () => {
    const response = await fetch(edge.url('/v1/teams/acme/things/1'), { method: 'DELETE' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD, PATCH');
    expect((await readJson(response)).error.code).toBe('method_not_allowed');
  });

  it('answers 405 for routes mounted outside /v1 and for the ops endpoints', async () => {
    const token = await fetch(edge.url('/oauth/token'));
    expect(token.status).toBe(405);
    expect(token.headers.get('allow')).toBe('POST');
    const health = await fetch(edge.url('/healthz'), { method: 'POST' });
    expect(health.status).toBe(405);
    expect(health.headers.get('allow')).toBe('GET, HEAD');
  });

  it('serves mounted routes', async () => {
    const response = await fetch(edge.url('/oauth/token'), { method: 'POST' });
    expect(response.status).toBe(200);
  });
});

describe('errors', () => {
  it('renders an unexpected error as 500 internal with a generic message, logging the stack', async () => {
    const response = await fetch(edge.url('/v1/boom'), { headers: { 'x-request-id': 'boom-request-1' } });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ error: { code: 'internal', message: 'Internal error', requestId: 'boom-request-1' } });
    expect(text).not.toMatch(/hunter2|postgres|at .*\.ts/);

    await accessLogFor(edge, 'boom-request-1');
    const logged = edge.lines.find((l) => l.msg === 'request failed' && l.requestId === 'boom-request-1');
    expect(logged).toBeDefined();
    expect(JSON.stringify(logged)).toMatch(/routes\.ts/); // the stack is in the log
  });

  it('applies AppError headers, such as Retry-After on slow_down', async () => {
    const response = await fetch(edge.url('/v1/slow'), { method: 'POST' });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('30');
    expect((await readJson(response)).error).toMatchObject({ code: 'slow_down', message: 'Too many requests; retry later' });
  });
});

describe('ops endpoints on the edge', () => {
  it('answers /healthz', async () => {
    const response = await fetch(edge.url('/healthz'));
    expect(response.status).toBe(200);
    expect(await readJson(response)).toEqual({ status: 'ok' });
    expect(response.headers.get('x-powered-by')).toBeNull();
  });

  it('serves neither /readyz nor /metrics on the public port (they are on the ops listener)', async () => {
    for (const path of ['/readyz', '/metrics']) {
      const response = await fetch(edge.url(path));
      expect(response.status).toBe(404);
      expect((await readJson(response)).error.code).toBe('not_found');
    }
  });

  it('records request durations by route template, for /metrics on the ops listener', async () => {
    await fetch(edge.url('/v1/teams/metrics-team/things/5'));
    const text = await metricsRegistry.metrics();
    expect(text).toContain('platform_http_request_duration_seconds_bucket');
    expect(text).toMatch(/platform_http_request_duration_seconds_count\{method="GET",route="\/v1\/teams\/\{team\}\/things\/\{thingId\}",status="200"\} \d+/);
    expect(text).not.toContain('metrics-team');
  });
});

describe('ETags', () => {
  it('sends an ETag only for a resource revision, never a body hash (so no unasked-for 304s)', async () => {
    const health = await fetch(edge.url('/healthz'));
    expect(health.headers.get('etag')).toBeNull();
    const again = await fetch(edge.url('/healthz'), { headers: { 'if-none-match': '*' } });
    expect(again.status).toBe(200);
  });
});
