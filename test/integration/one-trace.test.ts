import { SpanKind } from '@opentelemetry/api';
import { Client } from 'pg';
import { ApiClient, eventually, installTestTracing, newTeam, startTestPlatform, TEST_ADMIN, unique, type TestPlatform } from '@platform/test';

/**
 * One request is one trace across the platform: the edge's SERVER span, the gRPC call to the catalog service
 * (CLIENT and SERVER spans), the SQL it runs, and its audit event's consumption by the identity service after it
 * crossed the catalog's outbox and the bus (Kafka under CI) all carry the trace id the caller sent in `traceparent`.
 * SQL outside any request (the relays polling their outboxes, every 50 ms here) makes no trace of its own.
 */
const { exporter, uninstall } = installTestTracing();
let platform: TestPlatform;

beforeAll(async () => {
  platform = await startTestPlatform({ env: { OUTBOX_POLL_MS: '50' } });
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
  const sql = spans.filter((span) => span.kind === SpanKind.CLIENT && span.attributes['db.system.name'] !== undefined);
  // Named by its query summary, as the OTel database conventions name a statement's span.
  expect(sql.map((span) => span.name)).toEqual(expect.arrayContaining(['INSERT catalog.gateways']));
  // Each statement's span is a child in the request's trace, none a root.
  expect(sql.filter((span) => span.parentSpanContext === undefined)).toEqual([]);
  expect(consumed.spanContext().traceId).toBe(traceId);
});

/** How many times the services' relays have read their outboxes so far, by PostgreSQL's table statistics. */
async function outboxReads(): Promise<number> {
  const client = new Client({ connectionString: platform.env.DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ reads: string }>(
      "SELECT coalesce(sum(seq_scan + coalesce(idx_scan, 0)), 0) AS reads FROM pg_stat_user_tables WHERE relname = 'outbox'",
    );
    return Number(rows[0]!.reads);
  } finally {
    await client.end();
  }
}

it('makes no trace of its own for SQL outside a request, such as an idle platform\'s relay polls', async () => {
  exporter.reset();
  if (platform.env.DATABASE_URL) {
    // Several polls of every relay (statistics reach the view about once a second).
    const before = await outboxReads();
    await eventually(outboxReads, (reads) => reads >= before + 30);
  } else {
    await new Promise((resolve) => setTimeout(resolve, 2_000)); // about 40 polls per relay
  }
  const rootSql = exporter.getFinishedSpans().filter((span) => span.attributes['db.system.name'] !== undefined && span.parentSpanContext === undefined);
  expect(rootSql.map((span) => span.name)).toEqual([]); // a SQL span's name is its query summary
});
