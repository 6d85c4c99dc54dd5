import { context, propagation, SpanKind, trace, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  ParentBasedSampler,
  SamplingDecision,
  SimpleSpanProcessor,
  type ReadableSpan,
  type Sampler,
} from '@opentelemetry/sdk-trace-base';
import { connect } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ApiClient,
  eventually,
  gatewayFronting,
  newTeam,
  startMcpUpstream,
  startTestPlatform,
  TEST_ADMIN,
  unique,
  type FrontedGateway,
  type McpUpstream,
  type TestPlatform,
} from '@platform/test';

/**
 * A trace as a real SDK with a parent-based sampler records it (OTEL_TRACES_SAMPLER=parentbased_*, the SDK's
 * default) and its default propagators (W3C trace context and baggage): the edge's SERVER span takes the sampling
 * decision for the whole request, the outbox relay's publish, which runs in a trace of its own, links to the traces
 * of the events it publishes, a request whose client went away is not reported as answered, and what the edge passes
 * on of a caller's trace context is the W3C trace context alone.
 *
 * The root sampler here drops every request that reaches the edge without a traceparent (a root span carrying
 * `http.request.method`) and keeps every other root, so a span of such a request that starts a trace of its own
 * instead of following the edge's decision is recorded, and seen.
 */
class DropEdgeRequests implements Sampler {
  shouldSample(_context: unknown, _traceId: string, _name: string, _kind: SpanKind, attributes: Attributes) {
    return { decision: attributes['http.request.method'] !== undefined ? SamplingDecision.NOT_RECORD : SamplingDecision.RECORD_AND_SAMPLED };
  }
  toString(): string {
    return 'DropEdgeRequests';
  }
}

const exporter = new InMemorySpanExporter();
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
trace.setGlobalTracerProvider(
  new BasicTracerProvider({ sampler: new ParentBasedSampler({ root: new DropEdgeRequests() }), spanProcessors: [new SimpleSpanProcessor(exporter)] }),
);

let platform: TestPlatform;
let admin: ApiClient;
let team: string;
let upstream: McpUpstream;

beforeAll(async () => {
  upstream = await startMcpUpstream({ name: 'traced' });
  platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
  admin = new ApiClient(platform);
  expect((await admin.signIn(TEST_ADMIN.email, TEST_ADMIN.password)).status).toBe(200);
  team = await newTeam(admin, { id: (await admin.get('/v1/me')).body.data.id });
}, 60_000);
afterAll(async () => {
  await platform?.stop();
  await upstream?.close();
  trace.disable();
  propagation.disable();
  context.disable();
});

const isCreateGateway = (span: ReadableSpan) => span.attributes['rpc.method'] === 'CreateGateway';

it("records none of a request's spans when the edge's sampling decision drops it", async () => {
  exporter.reset();
  const created = await admin.post(`/v1/teams/${team}/gateways`, { slug: unique('unsampled'), name: 'Unsampled gateway' });
  expect(created.status).toBe(201);
  // The gRPC call the request made, and everything under it, follows the edge's decision: not sampled.
  expect(exporter.getFinishedSpans().filter(isCreateGateway).map((span) => `${SpanKind[span.kind]} ${span.name}`)).toEqual([]);

  // A sampled request records the same call (the check above would see it).
  const traceId = 'b7ad6b7169203331b7ad6b7169203331';
  const traced = await admin.post(`/v1/teams/${team}/gateways`, { slug: unique('sampled'), name: 'Sampled gateway' }, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
  expect(traced.status).toBe(201);
  const call = exporter.getFinishedSpans().filter(isCreateGateway);
  expect(call.map((span) => span.kind).sort()).toEqual([SpanKind.SERVER, SpanKind.CLIENT].sort());
  expect(call.every((span) => span.spanContext().traceId === traceId)).toBe(true);
});

it("links the relay's publish to the trace of the request that wrote the event", async () => {
  exporter.reset();
  const traceId = '0af7651916cd43dd8448eb211c80319c';
  const created = await admin.post(`/v1/teams/${team}/gateways`, { slug: unique('linked'), name: 'Linked gateway' }, { traceparent: `00-${traceId}-b9c7c989f97918e1-01` });
  expect(created.status).toBe(201);

  const publish = await eventually(
    () => exporter.getFinishedSpans().find((span) => span.kind === SpanKind.PRODUCER && span.links.some((link) => link.context.traceId === traceId)),
    'a PRODUCER span linked to the request trace',
  );
  // The relay runs in its own trace, and its link points at the span that wrote the event (the catalog's handler).
  expect(publish.spanContext().traceId).not.toBe(traceId);
  const writer = exporter
    .getFinishedSpans()
    .find((span) => span.spanContext().traceId === traceId && span.kind === SpanKind.SERVER && isCreateGateway(span));
  expect(writer).toBeDefined();
  expect(publish.links.find((link) => link.context.traceId === traceId)!.context.spanId).toBe(writer!.spanContext().spanId);
});

/** A gateway of its own team fronting `upstream`, made once for the tests that call through `/mcp/{slug}`. */
let fronted: Promise<FrontedGateway> | undefined;
const frontedGateway = () => (fronted ??= gatewayFronting(platform, 'traced', [{ slug: 'traced', url: upstream.url }]));

/** An MCP client of the fronted gateway sending `headers` besides its token. */
async function mcpClient(headers: Record<string, string> = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport; gateway: FrontedGateway }> {
  const gateway = await frontedGateway();
  const client = new Client({ name: 'traced-client', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(platform.url(`/mcp/${gateway.gatewaySlug}`)), {
    requestInit: { headers: { authorization: `Bearer ${gateway.token}`, ...headers } },
  });
  await client.connect(transport);
  return { client, transport, gateway };
}

it('reports no status for a request whose client went away before an answer', async () => {
  const { client, transport, gateway } = await mcpClient();
  exporter.reset();
  const traceId = '5e1b0c0ffee5e1b0c0ffee5e1b0c0ffe';
  // A call that the upstream answers late, with nothing before its answer: the edge sends nothing until then.
  const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'traced__slow', arguments: { steps: 1, stepMs: 30_000 } } });
  const socket = connect(Number(new URL(platform.url('/')).port), '127.0.0.1');
  try {
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const head = [
      `POST /mcp/${gateway.gatewaySlug} HTTP/1.1`,
      'host: 127.0.0.1',
      `authorization: Bearer ${gateway.token}`,
      `mcp-session-id: ${transport.sessionId}`,
      'content-type: application/json',
      'accept: application/json, text/event-stream',
      `content-length: ${Buffer.byteLength(body)}`,
      `traceparent: 00-${traceId}-a3ce929d0e0e4736-01`,
    ];
    socket.write(`${head.join('\r\n')}\r\n\r\n${body}`);
    const upstreamCalled = () => upstream.requests.some((request) => request.headers.traceparent?.startsWith(`00-${traceId}-`));
    await eventually(upstreamCalled, 'the call at the upstream');
    expect(socket.bytesRead).toBe(0); // nothing answered yet
  } finally {
    socket.destroy();
    await client.close();
  }
  const server = await eventually(
    () => exporter.getFinishedSpans().find((span) => span.kind === SpanKind.SERVER && span.spanContext().traceId === traceId),
    'the SERVER span of the abandoned request',
  );
  expect(server.name).toBe('POST /mcp/{slug}');
  expect(server.attributes['http.response.status_code']).toBeUndefined();
  expect(server.status.code).toBe(0); // UNSET: the client's leaving is no server error
});

it("passes on the caller's W3C trace context to the upstream MCP server, never its baggage", async () => {
  const traceId = '6f2c1d1e0bad6f2c1d1e0bad6f2c1d1e';
  // A caller's trace context, with baggage the platform must not spread to the servers behind it.
  const { client } = await mcpClient({ traceparent: `00-${traceId}-c0ffee0ddba11000-01`, baggage: 'tenant=acme,session=caller-secret' });
  try {
    await client.callTool({ name: 'traced__echo', arguments: { text: 'hi' } });
  } finally {
    await client.close();
  }
  const forwarded = upstream.requests.filter((request) => request.headers.traceparent?.startsWith(`00-${traceId}-`));
  expect(forwarded.length).toBeGreaterThan(0);
  expect(forwarded.map((request) => request.headers.baggage)).toEqual(forwarded.map(() => undefined));
});
