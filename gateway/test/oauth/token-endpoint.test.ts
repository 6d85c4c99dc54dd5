import { SpanKind } from '@opentelemetry/api';
import { installTestTracing, startTestPlatform, type TestPlatform } from '@platform/test';
import { form, json } from './support';

/**
 * `/oauth/token` is served ahead of the edge's express app (token-endpoint.ts). These pin down what that path could
 * get wrong and the protocol tests do not: which request targets it serves, other methods, the headers of every
 * answer, the route it is recorded under, its span, and the client address the §8 limit counts under TRUST_PROXY.
 */
const { exporter, uninstall } = installTestTracing();
let platform: TestPlatform;
/** The same platform behind a trusted proxy on loopback, as in a deployment behind an ingress. */
let proxied: TestPlatform;

beforeAll(async () => {
  [platform, proxied] = await Promise.all([startTestPlatform(), startTestPlatform({ env: { TRUST_PROXY: 'loopback' } })]);
}, 90_000);

afterAll(async () => {
  await Promise.all([platform?.stop(), proxied?.stop()]);
  uninstall();
});

const unsupportedGrant = () => form({ grant_type: 'password', username: 'a', password: 'b' });
/** A token request refused as unsupported_grant_type before any service is asked, with extra headers. */
const unsupportedGrantWith = (headers: Record<string, string>): RequestInit => ({
  ...unsupportedGrant(),
  headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
});

describe('what the token endpoint serves', () => {
  it('serves the path with a query string, reading the parameters from the body only', async () => {
    const response = await fetch(platform.url('/oauth/token?grant_type=refresh_token&refresh_token=x&client_id=y'), form({}));
    expect(response.status).toBe(400);
    expect(await json(response)).toEqual({ error: 'invalid_request', error_description: 'grant_type is required' });
  });

  it('still serves the path with a trailing slash or in another case, as express matched it', async () => {
    for (const path of ['/oauth/token/', '/OAuth/Token', '/oauth/token/?x=1']) {
      const response = await fetch(platform.url(path), unsupportedGrant());
      expect(response.status).toBe(400);
      expect((await json(response)).error).toBe('unsupported_grant_type');
    }
  });

  it('leaves other paths to the rest of the edge', async () => {
    for (const path of ['/oauth/tokens', '/oauth/token/x', '/oauth/token2?x']) {
      const response = await fetch(platform.url(path), unsupportedGrant());
      expect(response.status).toBe(404);
      expect((await json(response)).error.code).toBe('not_found');
    }
  });
});

describe('answers', () => {
  it('sends every answer with the request id, CORS and no-store headers', async () => {
    const response = await fetch(platform.url('/oauth/token'), unsupportedGrantWith({ 'x-request-id': 'token-request-0001' }));
    expect(response.status).toBe(400);
    expect(response.headers.get('x-request-id')).toBe('token-request-0001');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-expose-headers')).toBe('WWW-Authenticate, Retry-After');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('pragma')).toBe('no-cache');
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });

  it('answers a preflight with 204 and the allowed method, headers and max-age', async () => {
    const response = await fetch(platform.url('/oauth/token'), {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-methods')).toBe('POST');
    expect(response.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type, Accept, MCP-Protocol-Version');
    expect(response.headers.get('access-control-max-age')).toBe('600');
    expect(response.headers.get('cache-control')).toBeNull();
    expect(await response.text()).toBe('');
  });

  it('answers PUT and HEAD with 405, Allow: POST, in the OAuth error shape (HEAD without a body)', async () => {
    const put = await fetch(platform.url('/oauth/token'), { method: 'PUT', body: 'grant_type=refresh_token' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('POST');
    expect(put.headers.get('cache-control')).toBe('no-store');
    expect(put.headers.get('access-control-allow-origin')).toBe('*');
    expect(await json(put)).toEqual({ error: 'method_not_allowed', error_description: 'Method PUT is not allowed here; use POST' });

    const head = await fetch(platform.url('/oauth/token'), { method: 'HEAD' });
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')).toBe('POST');
    expect(head.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await head.text()).toBe('');
  });

  it('refuses a body over 16 KiB, declared or streamed, with invalid_request', async () => {
    const declared = await fetch(platform.url('/oauth/token'), form({ grant_type: 'refresh_token', refresh_token: 'x'.repeat(17 * 1024), client_id: 'y' }));
    expect(declared.status).toBe(400);
    expect(await json(declared)).toEqual({ error: 'invalid_request', error_description: 'The body is too large' });

    const body = new TextEncoder().encode(`grant_type=refresh_token&refresh_token=${'x'.repeat(17 * 1024)}`);
    const streamed = await fetch(platform.url('/oauth/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new ReadableStream({ start: (controller) => (controller.enqueue(body), controller.close()) }),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(400);
    expect((await json(streamed)).error_description).toBe('The body is too large');
  });
});

describe('observability', () => {
  it('records the duration metric under the route /oauth/token, never the raw path', async () => {
    await fetch(platform.url('/oauth/token?secret-looking=abc123'), { method: 'DELETE' });
    const metrics = await (await fetch(platform.opsUrl('/metrics'))).text();
    expect(metrics).toMatch(/platform_http_request_duration_seconds_count\{method="DELETE",route="\/oauth\/token",status="405"\} \d+/);
    expect(metrics).not.toContain('secret-looking');
  });

  it('serves the grant in a SERVER span named after the route, continuing the caller\'s trace into identity', async () => {
    const traceId = '5cf92f3577b34da6a3ce929d0e0e4736';
    const response = await fetch(platform.url('/oauth/token'), {
      ...form({ grant_type: 'refresh_token', refresh_token: 'svcrt_unknown', client_id: 'svccl_unknown' }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toBe('invalid_grant');

    const spans = exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
    const edge = spans.find((span) => span.kind === SpanKind.SERVER && span.name === 'POST /oauth/token');
    expect(edge).toBeDefined();
    expect(edge!.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(edge!.attributes).toMatchObject({ 'http.route': '/oauth/token', 'http.response.status_code': 400 });
    const call = spans.find((span) => span.kind === SpanKind.CLIENT && span.name === 'platform.identity.v1.IdentityService/RefreshToken');
    expect(call?.parentSpanContext?.spanId).toBe(edge!.spanContext().spanId);
  });
});

/** Sends token requests, each forwarded for the address `forwardedFor(i)`, until one is refused; its index, or -1. */
async function firstRefused(target: TestPlatform, count: number, forwardedFor: (i: number) => string): Promise<number> {
  for (let i = 0; i < count; i++) {
    const response = await fetch(target.url('/oauth/token'), unsupportedGrantWith({ 'x-forwarded-for': forwardedFor(i) }));
    if (response.status === 429) return i;
    expect(response.status).toBe(400);
  }
  return -1;
}

describe('the client address the §8 limit counts', () => {
  // A burst of 121 spans at most two fixed windows, so one of them sees 61 requests of an address counted as one.
  const BURST = 121;

  it('is the forwarded address when the proxy is trusted: each address has its own limit', async () => {
    expect(await firstRefused(proxied, 70, (i) => `198.51.100.${i + 1}`)).toBe(-1);
    expect(await firstRefused(proxied, BURST, () => '203.0.113.7')).toBeGreaterThanOrEqual(0);
    // The limited address's neighbour, and the proxy itself, are still served.
    expect(await firstRefused(proxied, 1, () => '203.0.113.8')).toBe(-1);
    expect((await fetch(proxied.url('/oauth/token'), unsupportedGrant())).status).toBe(400);
  }, 60_000);

  it('counts an IPv6 client by its /64 (it may rotate through the whole prefix), an IPv4-mapped one by its IPv4 address', async () => {
    expect(await firstRefused(proxied, BURST, (i) => `2001:db8:5:6::${(i + 1).toString(16)}`)).toBeGreaterThanOrEqual(0);
    // The neighbouring /64 has a limit of its own.
    expect(await firstRefused(proxied, 1, () => '2001:db8:5:7::1')).toBe(-1);
    // IPv4 clients reaching a dual-stack socket arrive IPv4-mapped: each is still its own address, never one /64 for all.
    expect(await firstRefused(proxied, 70, (i) => `::ffff:198.51.100.${i + 101}`)).toBe(-1);
  }, 60_000);

  it('is the socket\'s when it is not: X-Forwarded-For is ignored', async () => {
    expect(await firstRefused(platform, BURST, (i) => `192.0.2.${i + 1}`)).toBeGreaterThanOrEqual(0);
  }, 60_000);
});
