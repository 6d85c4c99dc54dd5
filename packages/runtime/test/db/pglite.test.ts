import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPgliteDatabase, NestedDatabaseUseError, type Database } from '../../src/db';
import { databaseContract, silentLogger } from './database-contract';
import { PGLITE_START_TIMEOUT_MS, startedMemoryPglite } from './memory-pglite';

describe('PGlite database', () => {
  let db: Database;
  beforeAll(async () => {
    db = await startedMemoryPglite(silentLogger);
  }, PGLITE_START_TIMEOUT_MS);
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

  it('can create pg_trgm and serve ILIKE from a trigram index (migrations create it)', async () => {
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    await db.query('CREATE TABLE trigram_names (name text)');
    await db.query("INSERT INTO trigram_names SELECT 'name ' || i FROM generate_series(1, 500) i");
    await db.query('CREATE INDEX trigram_names_name ON trigram_names USING gin (name gin_trgm_ops)');
    const matched = await db.query<{ name: string }>('SELECT name FROM trigram_names WHERE name ILIKE $1 ORDER BY name', ['%ME 49%']);
    expect(matched.rows.map((row) => row.name)).toEqual(['name 49', 'name 490', 'name 491', 'name 492', 'name 493', 'name 494', 'name 495', 'name 496', 'name 497', 'name 498', 'name 499']);
    await db.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      const plan = await tx.query<{ 'QUERY PLAN': string }>("EXPLAIN SELECT name FROM trigram_names WHERE name ILIKE '%me 49%'");
      expect(plan.rows.map((row) => row['QUERY PLAN']).join('\n')).toContain('trigram_names_name');
    });
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
