import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  answer,
  eventually,
  gatewayFronting,
  initializeResult,
  installTestTracing,
  rawMcpSession,
  startRawUpstream,
  startTestPlatform,
  unique,
  type FrontedGateway,
  type RawMessage,
  type RawUpstream,
  type TestPlatform,
} from '@platform/test';

/**
 * The edge's CLIENT span for each HTTP exchange with an upstream MCP server (docs/architecture.md, Traces): a child of
 * the request's SERVER span, whose context is the `traceparent` the upstream gets (so the upstream's own span is its
 * child), named and attributed by the OTel HTTP client conventions, marked failed for a 5xx or a broken exchange, and
 * holding none of the secrets the exchange carries. A request that is not traced gets none.
 */
const { exporter, uninstall } = installTestTracing();

/** What the upstream received, per request. */
interface Received {
  method: string;
  rpc: string | undefined;
  traceparent: string | undefined;
  authorization: string | undefined;
}

const credential = `Bearer ${unique('sk-static-credential')}`;
/** A key in the upstream's URL, as some servers take it: never in a span. */
const urlKey = unique('url-key');
const received: Received[] = [];
let platform: TestPlatform;
let upstream: RawUpstream;
let gateway: FrontedGateway;
let session: string;

function handle(message: RawMessage, res: ServerResponse, req: IncomingMessage): boolean {
  const header = (name: string) => req.headers[name] as string | undefined;
  received.push({ method: req.method ?? '', rpc: message?.method, traceparent: header('traceparent'), authorization: header('authorization') });
  if (message?.method === 'initialize') answer(res, message.id, initializeResult());
  else if (message?.method === 'tools/list') answer(res, message.id, { tools: ['echo', 'broken', 'reset'].map((name) => ({ name, inputSchema: { type: 'object' } })) });
  else if (message?.method === 'tools/call') {
    const tool = (message as { params?: { name?: string } }).params?.name;
    if (tool === 'broken') res.writeHead(500).end();
    else if (tool === 'reset') res.socket!.destroy();
    else answer(res, message.id, { content: [{ type: 'text', text: 'ok' }] });
  } else return false;
  return true;
}

beforeAll(async () => {
  upstream = await startRawUpstream(handle);
  platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
  const url = `${upstream.url}?key=${urlKey}`;
  gateway = await gatewayFronting(platform, 'client-span', [
    { slug: 'static', url, authValue: credential, timeoutSeconds: 5 },
    { slug: 'ident', url, sendIdentity: true, timeoutSeconds: 5 },
  ]);
  session = await rawMcpSession(platform, gateway);
}, 120_000);
afterAll(async () => {
  await platform?.stop();
  await upstream?.close();
  uninstall();
});

let nextId = 0;
/** Calls `tool` through the gateway under the caller's trace `traceId` (`flags` 01: sampled). */
async function callTool(tool: string, traceId: string, flags = '01'): Promise<void> {
  const response = await fetch(platform.url(`/mcp/${gateway.gatewaySlug}`), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${gateway.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': session,
      'mcp-protocol-version': '2025-06-18',
      traceparent: `00-${traceId}-a3ce929d0e0e4736-${flags}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++nextId, method: 'tools/call', params: { name: tool, arguments: {} } }),
  });
  await response.text();
}

const inTrace = (traceId: string) => exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);

/** The edge's SERVER span of the call in `traceId`, and the CLIENT span of its tools/call exchange with the upstream. */
async function spansOfCall(traceId: string): Promise<{ server: ReadableSpan; client: ReadableSpan; sent: Received }> {
  const server = await eventually(() => inTrace(traceId).find((span) => span.kind === SpanKind.SERVER), 'the SERVER span of the call');
  const sent = received.find((request) => request.rpc === 'tools/call' && request.traceparent?.startsWith(`00-${traceId}-`));
  expect(sent).toBeDefined();
  // The upstream was told the CLIENT span as its parent.
  const parentSpanId = sent!.traceparent!.split('-')[2];
  const client = inTrace(traceId).find((span) => span.spanContext().spanId === parentSpanId);
  expect(client).toBeDefined();
  return { server, client: client!, sent: sent! };
}

it("makes a CLIENT span under the edge's SERVER span for the exchange, the parent the upstream is told", async () => {
  const traceId = '7d1c0ffee7d1c0ffee7d1c0ffee7d1c0';
  await callTool('static__echo', traceId);
  const { server, client } = await spansOfCall(traceId);
  expect(server.name).toBe('POST /mcp/{slug}');
  expect(client.kind).toBe(SpanKind.CLIENT);
  expect(client.name).toBe('POST');
  expect(client.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
  expect(client.attributes).toEqual({
    'http.request.method': 'POST',
    'server.address': '127.0.0.1',
    'server.port': Number(new URL(upstream.url).port),
    'http.response.status_code': 200,
  });
  expect(client.status.code).toBe(SpanStatusCode.UNSET);
});

it('marks the span of an exchange that failed: a 5xx answer, a broken connection', async () => {
  const answered500 = 'e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5';
  await callTool('static__broken', answered500);
  const { client: broken } = await spansOfCall(answered500);
  expect(broken.status.code).toBe(SpanStatusCode.ERROR);
  expect(broken.attributes).toMatchObject({ 'http.response.status_code': 500, 'error.type': '500' });

  const cut = 'c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0';
  await callTool('static__reset', cut);
  const { client: reset } = await spansOfCall(cut);
  expect(reset.status.code).toBe(SpanStatusCode.ERROR);
  expect(reset.attributes['error.type']).toBe('unreachable');
  expect(reset.attributes['http.response.status_code']).toBeUndefined();
});

it('makes a CLIENT span for the upstream GET stream request too', async () => {
  const traceId = '9e7c0ffee9e7c0ffee9e7c0ffee9e7c0';
  const stop = new AbortController();
  const opened = fetch(platform.url(`/mcp/${gateway.gatewaySlug}`), {
    headers: {
      authorization: `Bearer ${gateway.token}`,
      accept: 'text/event-stream',
      'mcp-session-id': session,
      'mcp-protocol-version': '2025-06-18',
      traceparent: `00-${traceId}-b7ad6b7169203331-01`,
    },
    signal: stop.signal,
  }).catch(() => undefined); // open until aborted
  const sent = await eventually(() => received.find((request) => request.method === 'GET' && request.traceparent?.startsWith(`00-${traceId}-`)), 'the GET at the upstream');
  // The span ends with the upstream's answer, while the client's stream stays open.
  const client = await eventually(() => inTrace(traceId).find((span) => span.spanContext().spanId === sent.traceparent!.split('-')[2]), 'the GET CLIENT span');
  stop.abort();
  await opened;
  expect(client.kind).toBe(SpanKind.CLIENT);
  expect(client.name).toBe('GET');
  // The raw upstream offers no GET stream: a 405, part of the protocol, is no error.
  expect(client.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.response.status_code': 405 });
  expect(client.status.code).toBe(SpanStatusCode.UNSET);
  const server = await eventually(() => inTrace(traceId).find((span) => span.kind === SpanKind.SERVER), 'the SERVER span of the GET');
  expect(client.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
});

it('makes no CLIENT span for a request that is not sampled, and still passes its trace context on', async () => {
  const traceId = '0dd0dd0dd0dd0dd0dd0dd0dd0dd0dd00';
  await callTool('static__echo', traceId, '00');
  const sent = received.find((request) => request.rpc === 'tools/call' && request.traceparent?.startsWith(`00-${traceId}-`));
  expect(sent?.traceparent).toMatch(/-00$/);
  expect(inTrace(traceId)).toEqual([]);
});

it('puts none of the secrets an exchange carries in any span: the credential, the identity token, the URL key', async () => {
  await callTool('ident__echo', '1de1de1de1de1de1de1de1de1de1de1d');
  await spansOfCall('1de1de1de1de1de1de1de1de1de1de1d');
  const identityTokens = received.map((request) => request.authorization).filter((value) => value && value !== credential && value.startsWith('Bearer ey'));
  expect(identityTokens.length).toBeGreaterThan(0);
  const secrets = [credential.slice('Bearer '.length), ...identityTokens.map((value) => value!.slice('Bearer '.length)), urlKey, gateway.token];
  const exported = JSON.stringify(
    exporter.getFinishedSpans().map((span) => ({
      name: span.name,
      attributes: span.attributes,
      status: span.status,
      events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })),
      links: span.links.map((link) => link.attributes),
    })),
  );
  expect(exported).toContain('"http.request.method":"POST"'); // the CLIENT spans are among them
  expect(secrets.filter((secret) => exported.includes(secret))).toEqual([]);
});
