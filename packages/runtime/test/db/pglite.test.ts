import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPgliteDatabase, NestedDatabaseUseError, type Database } from '../../src/db';
import { databaseContract, silentLogger } from './database-contract';

describe('PGlite database', () => {
  let db: Database;
  beforeAll(() => {
    db = createPgliteDatabase({ dataDir: 'memory://', logger: silentLogger });
  });
  afterAll(() => db.close());

  databaseContract(() => ({ db, replica: db }));

  it('refuses the outer db inside a transaction instead of waiting forever', async () => {
    await expect(db.transaction(() => db.query('SELECT 1'))).rejects.toBeInstanceOf(NestedDatabaseUseError);
    await expect(db.transaction(() => db.transaction(async () => 1))).rejects.toBeInstanceOf(NestedDatabaseUseError);
    // The database is still usable afterwards, and the outer db is fine once the transaction is over.
    let later: Promise<unknown> | undefined;
    await db.transaction(async (tx) => {
      tx.afterCommit(() => (later = db.query('SELECT 1')));
    });
    await expect(later).resolves.toMatchObject({ rowCount: 1 });
  });

  it('persists under a data directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pglite-'));
    try {
      const first = createPgliteDatabase({ dataDir: join(dir, 'data'), logger: silentLogger });
      await first.query('CREATE TABLE kept (v text)');
      await first.query("INSERT INTO kept VALUES ('still here')");
      await first.close();
      const second = createPgliteDatabase({ dataDir: join(dir, 'data'), logger: silentLogger });
      expect((await second.query('SELECT v FROM kept')).rows).toEqual([{ v: 'still here' }]);
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000); // two embedded Postgres starts (initdb, then a reopen): slow on a loaded 2-core machine
});
