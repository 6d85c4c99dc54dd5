import { SpanKind } from '@opentelemetry/api';
import { installTestTracing } from '@platform/test';
import { accessLogFor, startEdge, type RunningEdge } from './support';
import { testRoutes } from './routes';

const { exporter, uninstall } = installTestTracing();
let edge: RunningEdge;

beforeAll(async () => {
  edge = await startEdge({ routes: testRoutes });
});
afterAll(async () => {
  await edge.close();
  uninstall();
});
beforeEach(() => exporter.reset());

async function serverSpanFor(requestId: string) {
  await accessLogFor(edge, requestId); // the span ends with the response, before the access log line
  const spans = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER);
  expect(spans).toHaveLength(1);
  return spans[0]!;
}

describe('SERVER span per request', () => {
  it('continues the trace of an incoming traceparent and is named after the route template', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentSpanId = '00f067aa0ba902b7';
    const response = await fetch(edge.url('/v1/teams/acme/things/9'), {
      headers: { traceparent: `00-${traceId}-${parentSpanId}-01`, 'x-request-id': 'traced-request-1' },
    });
    expect(response.status).toBe(200);
    const span = await serverSpanFor('traced-request-1');
    expect(span.spanContext().traceId).toBe(traceId);
    expect(span.parentSpanContext?.spanId).toBe(parentSpanId);
    expect(span.name).toBe('GET /v1/teams/{team}/things/{thingId}');
    expect(span.attributes['http.route']).toBe('/v1/teams/{team}/things/{thingId}');
    expect(span.attributes['http.response.status_code']).toBe(200);

    // The access log line is written inside the span, so it carries the trace context (OTel's JSON log field names).
    const line = await accessLogFor(edge, 'traced-request-1');
    expect(line).toMatchObject({ trace_id: traceId, span_id: span.spanContext().spanId, trace_flags: '01' });
  });

  it('starts a new trace without traceparent and marks server errors', async () => {
    await fetch(edge.url('/v1/boom'), { headers: { 'x-request-id': 'traced-request-2' } });
    const span = await serverSpanFor('traced-request-2');
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.name).toBe('GET /v1/boom');
    expect(span.status.code).toBe(2); // ERROR
    expect(span.events.some((e) => e.name === 'exception')).toBe(true);
  });

  it('names unmatched requests without their raw path', async () => {
    await fetch(edge.url('/v1/secret-looking/abc123'), { headers: { 'x-request-id': 'traced-request-3' } });
    const span = await serverSpanFor('traced-request-3');
    expect(span.name).toBe('GET unmatched');
  });
});
