import { SpanKind, SpanStatusCode, type Attributes } from '@opentelemetry/api';
import { createTestDatabase, describeWith, installTestTracing } from '@platform/test';
import { createPostgresDatabase, type Database } from '../../src/db';
import { withSpan } from '../../src/telemetry/tracing';
import { silentLogger } from '../db/database-contract';
import { PGLITE_START_TIMEOUT_MS, startedMemoryPglite } from '../db/memory-pglite';

/**
 * SQL spans as the stable OTel database conventions describe them, from both adapters: `db.system.name`, the query
 * summary as `db.query.summary` and span name, the text of a parameterised statement only (never a bound value), the
 * SQLSTATE of a failure, and for a server its address, port and database, never its credentials.
 */
const { exporter, uninstall } = installTestTracing();
afterAll(uninstall);
beforeEach(() => exporter.reset());

const BOUND_SECRET = 'bound-secret-value-7f3a';
const LITERAL_SECRET = 'literal-secret-value-91c2';

/** The CLIENT spans of the statements `work` runs inside a recording span. */
async function statementSpans(work: () => Promise<unknown>) {
  await withSpan('test-root', {}, work);
  return exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.CLIENT);
}

function sqlSpanContract(database: () => Database, connection: () => Attributes): void {
  beforeAll(async () => {
    await database().query('CREATE TABLE IF NOT EXISTS span_probe (name text PRIMARY KEY, secret text)');
  });

  it('names a parameterised statement by its summary and records its text, not its values', async () => {
    const sql = 'INSERT INTO span_probe (name, secret) VALUES ($1, $2)';
    const [span] = await statementSpans(() => database().query(sql, [`bound-${Date.now()}`, BOUND_SECRET]));
    expect(span!.name).toBe('INSERT span_probe');
    expect(span!.attributes).toEqual({
      'db.system.name': 'postgresql',
      'db.query.summary': 'INSERT span_probe',
      'db.query.text': sql,
      ...connection(),
    });
    expect(JSON.stringify(span!.attributes)).not.toContain(BOUND_SECRET);
  });

  it('records no text for a statement without bound values, which may hold values', async () => {
    const [span] = await statementSpans(() => database().query(`SELECT name FROM span_probe WHERE secret = '${LITERAL_SECRET}'`));
    expect(span!.name).toBe('SELECT span_probe');
    expect(span!.attributes['db.query.text']).toBeUndefined();
    expect(JSON.stringify(span!.attributes)).not.toContain(LITERAL_SECRET);
  });

  it('names a transaction\'s statements, and falls back to the system for a statement with no summary', async () => {
    const spans = await statementSpans(async () => {
      await database().transaction((tx) => tx.query('SELECT count(*) FROM span_probe'));
      await database().query('/* nothing */');
    });
    expect(spans.map((span) => span.name)).toEqual(['BEGIN', 'SELECT span_probe', 'COMMIT', 'postgresql']);
    expect(spans[3]!.attributes['db.query.summary']).toBeUndefined();
  });

  it('marks a failed statement with its SQLSTATE', async () => {
    const name = `duplicate-${Date.now()}`;
    await database().query('INSERT INTO span_probe (name) VALUES ($1)', [name]);
    const failing = statementSpans(() => database().query('INSERT INTO span_probe (name, secret) VALUES ($1, $2)', [name, BOUND_SECRET]));
    await expect(failing).rejects.toMatchObject({ code: '23505' });
    const [span] = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CLIENT);
    expect(span!.status.code).toBe(SpanStatusCode.ERROR);
    expect(span!.attributes).toMatchObject({ 'db.response.status_code': '23505', 'error.type': '23505' });
    expect(JSON.stringify({ attributes: span!.attributes, events: span!.events })).not.toContain(BOUND_SECRET);
  });

  it('carries none of the old, experimental attribute names', async () => {
    const [span] = await statementSpans(() => database().query('SELECT 1'));
    for (const old of ['db.system', 'db.operation', 'db.statement', 'db.name', 'db.sql.table']) expect(span!.attributes[old]).toBeUndefined();
  });
}

describeWith('postgres', 'SQL spans on PostgreSQL', (adminUrl) => {
  let testDb: { url: string; drop(): Promise<void> };
  let db: Database;
  beforeAll(async () => {
    testDb = await createTestDatabase(adminUrl());
    db = createPostgresDatabase({ url: testDb.url, poolMax: 2, logger: silentLogger });
  });
  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  sqlSpanContract(
    () => db,
    () => {
      const url = new URL(testDb.url);
      return { 'server.address': url.hostname, 'server.port': Number(url.port || 5432), 'db.namespace': url.pathname.slice(1) };
    },
  );
});

it("names the server and database of the configuration, never its credentials, and a broken connection's class", async () => {
  // Nothing listens on port 1 of loopback: the statement fails to connect, inside its span.
  const unreachable = createPostgresDatabase({ url: 'postgres://span_user:hunter2-db-password@127.0.0.1:1/span_db', poolMax: 1, logger: silentLogger });
  try {
    await expect(statementSpans(() => unreachable.query('SELECT 1'))).rejects.toThrow();
  } finally {
    await unreachable.close();
  }
  const [span] = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CLIENT);
  expect(span!.attributes).toMatchObject({ 'server.address': '127.0.0.1', 'server.port': 1, 'db.namespace': 'span_db', 'error.type': 'ECONNREFUSED' });
  expect(span!.attributes['db.response.status_code']).toBeUndefined();
  expect(JSON.stringify({ attributes: span!.attributes, events: span!.events })).not.toContain('hunter2');
});

describe('SQL spans on PGlite', () => {
  let db: Database;
  beforeAll(async () => {
    db = await startedMemoryPglite(silentLogger);
  }, PGLITE_START_TIMEOUT_MS);
  afterAll(() => db?.close());

  // In-process: no server, and no configured database to name.
  sqlSpanContract(() => db, () => ({}));
});
