import { SpanKind } from '@opentelemetry/api';
import { ApiClient, eventually, installTestTracing, newTeam, startTestPlatform, TEST_ADMIN, unique, type TestPlatform } from '@platform/test';

/**
 * One request is one trace across the platform: the edge's SERVER span, the gRPC call to the catalog service
 * (CLIENT and SERVER spans), the SQL it runs, and its audit event's consumption by the identity service after it
 * crossed the catalog's outbox and the bus (Kafka under CI) all carry the trace id the caller sent in `traceparent`.
 */
const { exporter, uninstall } = installTestTracing();
let platform: TestPlatform;

beforeAll(async () => {
  platform = await startTestPlatform();
}, 60_000);
afterAll(async () => {
  await platform?.stop();
  uninstall();
});

it('carries the caller\'s trace id from the edge through gRPC and the outbox to the event consumer', async () => {
  const admin = new ApiClient(platform);
  expect((await admin.signIn(TEST_ADMIN.email, TEST_ADMIN.password)).status).toBe(200);

  const me = await admin.get('/v1/me');
  const team = await newTeam(admin, { id: me.body.data.id });

  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const created = await admin.post(
    `/v1/teams/${team}/gateways`,
    { slug: unique('traced'), name: 'Traced gateway' },
    { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
  );
  expect(created.status).toBe(201);

  const inTrace = () => exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
  const consumed = await eventually(
    () => inTrace().find((span) => span.kind === SpanKind.CONSUMER && span.attributes['messaging.destination.name']?.toString().endsWith('audit.v1')),
    'the audit event consumer span',
  );
  const spans = inTrace();
  const kinds = (kind: SpanKind) => spans.filter((span) => span.kind === kind).map((span) => span.name);
  expect(kinds(SpanKind.SERVER)).toEqual(expect.arrayContaining(['POST /v1/teams/{team}/gateways', 'platform.catalog.v1.CatalogService/CreateGateway']));
  expect(kinds(SpanKind.CLIENT)).toEqual(expect.arrayContaining(['platform.catalog.v1.CatalogService/CreateGateway']));
  expect(spans.some((span) => span.kind === SpanKind.CLIENT && span.attributes['db.system'] !== undefined)).toBe(true);
  expect(consumed.spanContext().traceId).toBe(traceId);
});
