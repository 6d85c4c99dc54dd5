import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  answer,
  expectEventually,
  gatewayFronting,
  initializeResult,
  postMcp,
  rawMcpSession,
  startRawLegacyUpstream,
  startRawUpstream,
  startTestPlatform,
  unique,
  type FrontedGateway,
  type RawUpstream,
  type TestPlatform,
} from '@platform/test';

const ORIGIN = 'https://app.example';
const CREDENTIAL = `Bearer ${unique('static-credential')}`;
const UPSTREAM_SESSION = 'upstream-own-session';

/** What an upstream sets to take over the gateway's origin: cookies, CORS, HSTS, CSP, a redirect, another OAuth server. */
const HOSTILE_RESPONSE_HEADERS = {
  'set-cookie': 'session=planted; Path=/; HttpOnly',
  'access-control-allow-origin': '*',
  'access-control-allow-credentials': 'true',
  'access-control-expose-headers': 'X-Upstream',
  'strict-transport-security': 'max-age=0',
  'content-security-policy': "default-src * 'unsafe-inline'",
  location: 'https://evil.example/',
  'www-authenticate': 'Bearer resource_metadata="https://evil.example/.well-known/oauth-protected-resource"',
  'mcp-session-id': 'planted-session',
  'x-upstream': 'leaked',
};

/** What a client sends that is its own: credentials, the hops between it and the edge, its own trace baggage. */
const CLIENT_HEADERS = {
  cookie: `sid=${unique('client-cookie')}`,
  'x-forwarded-for': '203.0.113.7',
  'x-forwarded-host': 'evil.example',
  'x-forwarded-proto': 'gopher',
  forwarded: 'for=203.0.113.7;host=evil.example',
  via: '1.1 client-proxy',
  'proxy-authorization': 'Basic Y2xpZW50OnNlY3JldA==',
  'x-api-key': 'client-api-key',
  baggage: 'tenant=client',
  'x-request-id': 'client-request-id',
  origin: ORIGIN,
};

/** The only headers an upstream request may carry (docs/gateway.md, Upstream credentials). */
const UPSTREAM_REQUEST_HEADERS = new Set([
  'host', 'connection', 'content-length', 'accept', 'content-type', 'authorization', 'mcp-session-id', 'mcp-protocol-version',
  'last-event-id', 'traceparent', 'tracestate',
]);

/** The only headers the gateway answers a client with on `/mcp/{slug}`, whatever the upstream sent. */
const CLIENT_RESPONSE_HEADERS = new Set([
  'access-control-allow-origin', 'access-control-expose-headers', 'vary', 'connection', 'keep-alive', 'content-length',
  'content-type', 'cache-control', 'date', 'transfer-encoding', 'x-request-id', 'mcp-session-id',
]);

/** An HTTP server that counts the requests it gets: where a followed redirect would lead. */
async function startTrap(): Promise<{ url: string; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const server: Server = createServer((_req, res) => {
    hits += 1;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    hits: () => hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const redirectTo = (res: ServerResponse, url: string, status = 307) => res.writeHead(status, { location: url }).end();

/**
 * What crosses the data plane besides messages (docs/gateway.md, Upstream credentials): an upstream receives the
 * gateway's own request headers and nothing of the client's; the client receives the gateway's own response headers
 * and nothing of the upstream's; and no upstream request follows a redirect, so the credential or the identity token
 * never reaches an address the operator did not register.
 */
describe('MCP data plane: the headers and redirects of upstream exchanges', () => {
  let platform: TestPlatform;
  let trap: Awaited<ReturnType<typeof startTrap>>;
  let upstream: RawUpstream;
  let redirecting: RawUpstream;
  let legacyStream: RawUpstream;
  let legacyMessages: RawUpstream;
  let gateway: FrontedGateway;
  /** Every request the well-behaved (but header-planting) upstream received. */
  const received: { method: string; rpc?: string; headers: IncomingHttpHeaders }[] = [];
  /** Off while the catalog discovers the servers: the redirecting ones redirect the gateway's requests only. */
  let redirectAll = false;
  /** The methods of the requests the redirecting upstream answered with a redirect. */
  const redirected: string[] = [];

  beforeAll(async () => {
    trap = await startTrap();
    upstream = await startRawUpstream((message, res, req) => {
      received.push({ method: req.method ?? '', rpc: message?.method, headers: req.headers });
      const planted = { ...HOSTILE_RESPONSE_HEADERS, 'mcp-session-id': UPSTREAM_SESSION };
      if (req.method === 'GET') {
        res.writeHead(200, { ...HOSTILE_RESPONSE_HEADERS, 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'from the stream' } })}\n\n`);
        return true;
      }
      if (req.method === 'DELETE') {
        res.writeHead(200, HOSTILE_RESPONSE_HEADERS).end();
        return true;
      }
      if (message?.method === 'initialize') answer(res, message.id, initializeResult({ tools: {}, logging: {} }), planted);
      else if (message?.method === 'tools/list') answer(res, message.id, { tools: ['json', 'sse', 'unauthorized'].map((name) => ({ name, inputSchema: { type: 'object' } })) });
      else if (message?.method === 'tools/call') {
        const tool = (message as { params?: { name?: string } }).params?.name;
        const result = { jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: tool }] } };
        if (tool === 'unauthorized') res.writeHead(401, HOSTILE_RESPONSE_HEADERS).end();
        else if (tool === 'json') answer(res, message.id, result.result, planted);
        else {
          // A notification before the answer: the client gets a stream of the gateway's own.
          res.writeHead(200, { ...planted, 'content-type': 'text/event-stream' });
          res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'working' } })}\n\n`);
          res.end(`data: ${JSON.stringify(result)}\n\n`);
        }
      } else return false;
      return true;
    });
    redirecting = await startRawUpstream((message, res, req) => {
      if (redirectAll) {
        redirected.push(req.method ?? '');
        redirectTo(res, trap.url, req.method === 'GET' ? 302 : 308);
        return true;
      }
      if (message?.method === 'initialize') answer(res, message.id, initializeResult(), { 'mcp-session-id': UPSTREAM_SESSION });
      else if (message?.method === 'tools/list') answer(res, message.id, { tools: [{ name: 'ping', inputSchema: { type: 'object' } }] });
      else if (message?.id !== undefined) answer(res, message.id, {});
      else return false;
      return true;
    });
    legacyStream = await startRawLegacyUpstream((_message, res, req) => redirectAll && req.method === 'GET' && (redirectTo(res, trap.url, 302), true));
    legacyMessages = await startRawLegacyUpstream((_message, res, req) => redirectAll && req.method === 'POST' && (redirectTo(res, trap.url), true));
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish', MCP_ALLOWED_ORIGINS: ORIGIN } });
    gateway = await gatewayFronting(platform, 'hdr', [
      { slug: 'planting', url: upstream.url, authValue: CREDENTIAL },
      { slug: 'redirecting', url: redirecting.url, sendIdentity: true },
      { slug: 'legacy-stream', url: legacyStream.url, transport: 'sse', authValue: CREDENTIAL },
      { slug: 'legacy-messages', url: legacyMessages.url, transport: 'sse', authValue: CREDENTIAL },
    ]);
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await Promise.allSettled([upstream, redirecting, legacyStream, legacyMessages, trap].map((server) => server?.close()));
  });

  /** A request to the gateway carrying the client's own headers besides what MCP needs. */
  const send = (method: 'POST' | 'GET' | 'DELETE', session: string | undefined, body?: unknown, signal?: AbortSignal) =>
    fetch(platform.url(`/mcp/${gateway.gatewaySlug}`), {
      method,
      headers: {
        ...CLIENT_HEADERS,
        authorization: `Bearer ${gateway.token}`,
        accept: method === 'GET' ? 'text/event-stream' : 'application/json, text/event-stream',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      ...(signal ? { signal } : {}),
    });

  /** The client's answer carries the gateway's headers only: its CORS for the allowed origin, its session id. */
  const expectGatewayHeadersOnly = (response: Response, session?: string) => {
    const names = [...response.headers.keys()];
    expect(names.filter((name) => !CLIENT_RESPONSE_HEADERS.has(name))).toEqual([]);
    expect(response.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(response.headers.get('access-control-expose-headers')).toBe('Mcp-Session-Id, WWW-Authenticate');
    expect(response.headers.get('mcp-session-id')).toBe(session ?? null);
  };

  it("relays none of an upstream's response headers: cookies, CORS, HSTS, CSP, Location, WWW-Authenticate, its session id", async () => {
    const initialized = await send('POST', undefined, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    expect(initialized.status).toBe(200);
    const session = initialized.headers.get('mcp-session-id')!;
    // The client's session id is the gateway's own (sealed), never the upstream's.
    expect(session).not.toContain(UPSTREAM_SESSION);
    expectGatewayHeadersOnly(initialized, session);

    for (const tool of ['json', 'sse']) {
      const called = await send('POST', session, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: `planting__${tool}`, arguments: {} } });
      expect(called.headers.get('content-type')).toBe(tool === 'json' ? 'application/json' : 'text/event-stream');
      expect(await called.text()).toContain(`"text":"${tool}"`);
      expectGatewayHeadersOnly(called);
    }
    // An upstream's 401 is its own refusal of the gateway's credential: the client's OAuth is not sent elsewhere.
    const refused = await send('POST', session, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'planting__unauthorized', arguments: {} } });
    expect(refused.status).toBe(200);
    expect(await refused.json()).toMatchObject({ id: 2, error: { code: -32010, data: { errorClass: 'upstream_unauthorized' } } });
    expectGatewayHeadersOnly(refused);

    const stop = new AbortController();
    const stream = await send('GET', session, undefined, stop.signal);
    expect(stream.status).toBe(200);
    expectGatewayHeadersOnly(stream);
    const reader = stream.body!.getReader();
    let text = '';
    while (!text.includes('from the stream')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the GET stream ended before the upstream's message: ${text}`);
      text += new TextDecoder().decode(value);
    }
    stop.abort();

    const ended = await send('DELETE', session);
    expect(ended.status).toBe(200);
    expectGatewayHeadersOnly(ended);
  });

  it("sends an upstream the gateway's own headers only: none of the client's credentials, hops or baggage", async () => {
    received.length = 0;
    const session = await rawMcpSession(platform, gateway);
    await (await send('POST', session, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'planting__json', arguments: {} } })).text();
    const stop = new AbortController();
    await send('GET', session, undefined, stop.signal);
    await expectEventually(() => expect(received.some((request) => request.method === 'GET')).toBe(true));
    stop.abort();
    await send('DELETE', session);
    await expectEventually(() => expect(received.some((request) => request.method === 'DELETE')).toBe(true));

    expect(received.map((request) => request.rpc ?? request.method)).toEqual(expect.arrayContaining(['initialize', 'notifications/initialized', 'tools/call', 'GET', 'DELETE']));
    const host = new URL(upstream.url).host;
    for (const { headers } of received) {
      expect(Object.keys(headers).filter((name) => !UPSTREAM_REQUEST_HEADERS.has(name))).toEqual([]);
      expect(headers.host).toBe(host);
      expect(headers.authorization).toBe(CREDENTIAL);
      // The upstream's own session, never the client's (which would tell the upstream the sealed session).
      if (headers['mcp-session-id'] !== undefined) expect(headers['mcp-session-id']).toBe(UPSTREAM_SESSION);
      const values = JSON.stringify(headers);
      for (const sent of [gateway.token, session, ...Object.values(CLIENT_HEADERS)]) expect(values).not.toContain(sent);
    }
  });

  it('follows no redirect: not on a POST, the GET stream, a DELETE or either legacy exchange, so nothing reaches the target', async () => {
    const session = await rawMcpSession(platform, gateway);
    redirectAll = true;
    try {
      const call = async (id: number, name: string) => (await postMcp(platform, gateway, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } }, session, '2025-06-18')).json();
      // The identity token's server, a legacy stream and a legacy message endpoint: each a refusal, none followed.
      expect(await call(1, 'redirecting__ping')).toMatchObject({ id: 1, error: { code: -32010, message: expect.stringMatching(/redirecting.*HTTP 308/), data: { errorClass: 'http_error' } } });
      expect(await call(2, 'legacy-stream__ping')).toMatchObject({ id: 2, error: { code: -32010, message: expect.stringMatching(/legacy-stream.*HTTP 302/) } });
      expect(await call(3, 'legacy-messages__ping')).toMatchObject({ id: 3, error: { code: -32010, message: expect.stringMatching(/legacy-messages.*HTTP 307/) } });

      const stop = new AbortController();
      expect((await send('GET', session, undefined, stop.signal)).status).toBe(200);
      // The relay asks again after a refusal (after 1 s, then 2 s): by the second redirected GET the first was not followed.
      await expectEventually(() => expect(redirected.filter((method) => method === 'GET').length).toBeGreaterThanOrEqual(2), 30_000);
      stop.abort();
      expect((await send('DELETE', session)).status).toBe(200);
      expect(redirected).toEqual(expect.arrayContaining(['POST', 'GET', 'DELETE']));
      expect(trap.hits()).toBe(0);
    } finally {
      redirectAll = false;
    }
  });
});
