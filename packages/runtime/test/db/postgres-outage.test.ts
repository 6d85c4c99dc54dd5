import { createTestDatabase, describeWith, startTcpProxy, type TcpProxy } from '@platform/test';
import { createPostgresDatabase, type Database } from '../../src/db';
import { AppError } from '../../src/errors';
import { silentLogger } from './database-contract';

/**
 * The pool against a PostgreSQL that goes away or stops answering, through a relay that can cut or stall its
 * connections. A lost database is a dependency failure (AppError `unavailable`, 503), never an `internal` error (500);
 * a database that stops answering makes statements give up within the pool's bounds instead of waiting for ever and
 * holding every pooled connection; and the pool serves again once the database does, without a restart.
 */
describeWith('postgres', 'Postgres pool when the database fails', (adminUrl) => {
  let testDb: { url: string; drop(): Promise<void> };
  let proxy: TcpProxy;
  let db: Database;

  beforeAll(async () => {
    testDb = await createTestDatabase(adminUrl());
    const target = new URL(testDb.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const relayed = new URL(testDb.url);
    relayed.hostname = '127.0.0.1';
    relayed.port = String(proxy.port);
    // Short bounds so that the test need not wait the production ones; generous against a slow CI machine all the same.
    db = createPostgresDatabase({
      url: relayed.toString(),
      poolMax: 2,
      logger: silentLogger,
      timeouts: { connectMs: 2_000, statementMs: 1_500, readMs: 3_000 },
    });
  });
  afterEach(() => {
    proxy.thaw();
    proxy.restore();
  });
  afterAll(async () => {
    await db?.close();
    await proxy?.close();
    await testDb?.drop();
  });

  const unavailable = { code: 'unavailable', message: 'Service unavailable; try again shortly' };

  /** Both pooled connections open and idle. */
  async function warm(): Promise<void> {
    await Promise.all([db.query('SELECT pg_sleep(0.05)'), db.query('SELECT pg_sleep(0.05)')]);
  }

  it('answers a lost database with `unavailable`, statements and transactions alike, and serves again once it is back', async () => {
    await warm();
    proxy.cut();
    for (const attempt of [db.query('SELECT 1'), db.transaction((tx) => tx.query('SELECT 1')), db.ping()]) {
      const error = await attempt.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AppError);
      expect(error).toMatchObject(unavailable);
    }
    proxy.restore();
    await expect(db.query<{ one: number }>('SELECT 1 AS one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
    await expect(db.transaction((tx) => tx.query('SELECT 1'))).resolves.toMatchObject({ rowCount: 1 });
  });

  it('fails a transaction whose connection is lost midway with `unavailable`, and the process lives on', async () => {
    const transaction = db.transaction(async (tx) => {
      await tx.query('SELECT 1');
      proxy.cut();
      // The connection's end arrives while the transaction holds it (an unhandled 'error' event here ended the process).
      await new Promise((resolve) => setTimeout(resolve, 500));
      await tx.query('SELECT 1');
    });
    await expect(transaction).rejects.toMatchObject(unavailable);
    proxy.restore();
    await expect(db.transaction((tx) => tx.query('SELECT 1'))).resolves.toMatchObject({ rowCount: 1 });
  });

  it('gives up on connections that stopped answering and opens new ones, instead of holding the pool for ever', async () => {
    await warm();
    // The open connections stall; new ones still reach the server.
    proxy.freeze('');
    const stuck = await Promise.all([db.query('SELECT 1').catch((e: unknown) => e), db.transaction((tx) => tx.query('SELECT 1')).catch((e: unknown) => e)]);
    for (const error of stuck) expect(error).toMatchObject(unavailable);
    // Both stalled connections were dropped, not handed out again: these run on new ones.
    await expect(Promise.all([db.query('SELECT 1'), db.transaction((tx) => tx.query('SELECT 1'))])).resolves.toHaveLength(2);
  });

  it('gives up waiting for a connection to a server that accepts it and never answers', async () => {
    proxy.cut();
    proxy.restore();
    // Every connection, the new ones included, stalls: opening one never completes.
    proxy.stall();
    await expect(db.query('SELECT 1')).rejects.toMatchObject(unavailable);
    await expect(db.transaction((tx) => tx.query('SELECT 1'))).rejects.toMatchObject(unavailable);
    // The migrations' own connection too: a start against such a server fails rather than hangs.
    await expect(db.withAdvisoryLock('outage-test', async () => 'locked')).rejects.toThrow();
    proxy.thaw();
    await expect(db.withAdvisoryLock('outage-test', async () => 'locked')).resolves.toBe('locked');
    await expect(db.query('SELECT 1')).resolves.toMatchObject({ rowCount: 1 });
  });

  it("has the server cancel a statement that runs past statement_timeout, as `unavailable`", async () => {
    await expect(db.query('SELECT pg_sleep(10)')).rejects.toMatchObject(unavailable);
    await expect(db.query('SELECT 1')).resolves.toMatchObject({ rowCount: 1 });
  });

  it('keeps a statement that is wrong what it was: an error of the statement, not an outage', async () => {
    const error = await db.query('SELECT * FROM no_such_table').catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: '42P01' });
    // Nor is one sent with the wrong number of parameters (SQLSTATE 08P01, of the connection class): a bug.
    const misbound = await db.query('SELECT $1::int + $2::int', [1]).catch((e: unknown) => e);
    expect(misbound).not.toBeInstanceOf(AppError);
    expect(misbound).toMatchObject({ code: '08P01' });
  });
});
