import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import { memoryLogger } from '@platform/test';
import { createLogger } from '../../src/logging/logger';
import { runtimeMigrations } from '../../src/outbox/migrations';
import {
  loadMigrationsFromDir,
  migrate,
  migrateService,
  MigrationEditedError,
  type Database,
} from '../../src/db';

export const silentLogger = createLogger({ level: 'silent' });

export interface DatabaseFixture {
  db: Database;
  /** A second, independent Database on the same data (a second replica); the same instance for PGlite. */
  replica: Database;
}

const uniqueSchema = (label: string) => `${label}_${randomUUID().replace(/-/g, '').slice(0, 10)}`;

/** The behaviour every Database adapter must share. `fixture` is valid from beforeAll on. */
export function databaseContract(fixture: () => DatabaseFixture): void {
  let schema: string;
  beforeEach(async () => {
    schema = uniqueSchema('c');
    await fixture().db.query(`CREATE SCHEMA ${schema}`);
    await fixture().db.query(`CREATE TABLE ${schema}.items (id bigserial PRIMARY KEY, name text NOT NULL)`);
  });

  describe('query', () => {
    it('returns rows, and rowCount as returned rows for SELECT and affected rows for DML', async () => {
      const { db } = fixture();
      const inserted = await db.query(`INSERT INTO ${schema}.items (name) VALUES ($1), ($2)`, ['a', 'b']);
      expect(inserted).toEqual({ rows: [], rowCount: 2 });
      const updated = await db.query(`UPDATE ${schema}.items SET name = 'c' WHERE name = $1`, ['a']);
      expect(updated.rowCount).toBe(1);
      const selected = await db.query<{ name: string }>(`SELECT name FROM ${schema}.items ORDER BY name`);
      expect(selected.rows).toEqual([{ name: 'b' }, { name: 'c' }]);
      expect(selected.rowCount).toBe(2);
    });

    it('runs a prepared statement again and again, on the pool and in transactions, with the same answers', async () => {
      const { db } = fixture();
      // Past the fifth execution Postgres may switch a prepared statement to its generic plan: go beyond it.
      const insert = (queryable: Pick<Database, 'query'>, name: string) =>
        queryable.query<{ name: string }>(`INSERT INTO ${schema}.items (name) VALUES ($1) RETURNING name`, [name], { prepared: `contract_insert_${schema}` });
      for (let i = 0; i < 7; i++) expect((await insert(db, `pool-${i}`)).rows).toEqual([{ name: `pool-${i}` }]);
      await db.transaction(async (tx) => {
        expect((await insert(tx, 'tx-1')).rows).toEqual([{ name: 'tx-1' }]);
        expect((await insert(tx, 'tx-2')).rowCount).toBe(1);
      });
      const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.items`);
      expect(rows).toEqual([{ n: 9 }]);
    });

    it('runs several statements in one text without parameters and returns the last result', async () => {
      const { db } = fixture();
      const result = await db.query(`INSERT INTO ${schema}.items (name) VALUES ('x'); SELECT count(*)::int AS n FROM ${schema}.items`);
      expect(result.rows).toEqual([{ n: 1 }]);
    });

    it('normalises bigint to string, timestamps and dates to Date (UTC), jsonb to objects', async () => {
      const { db } = fixture();
      const { rows } = await db.query<Record<string, unknown>>(
        `SELECT 9007199254740993::int8 AS big,
                '2024-05-06 07:08:09+00'::timestamptz AS tz,
                '2024-05-06 07:08:09'::timestamp AS ts,
                '2024-05-06'::date AS d,
                $1::jsonb AS j,
                1.50::numeric AS n`,
        [JSON.stringify({ a: [1, 'two'] })],
      );
      expect(rows[0]).toEqual({
        big: '9007199254740993',
        tz: new Date('2024-05-06T07:08:09Z'),
        ts: new Date('2024-05-06T07:08:09Z'),
        d: new Date('2024-05-06T00:00:00Z'),
        j: { a: [1, 'two'] },
        n: '1.50',
      });
      const id = await db.query<{ id: unknown }>(`INSERT INTO ${schema}.items (name) VALUES ('a') RETURNING id`);
      expect(id.rows[0]!.id).toBe('1');
    });

    it('accepts Date and bigint-string parameters', async () => {
      const { db } = fixture();
      const { rows } = await db.query<{ t: Date; b: string }>('SELECT $1::timestamptz AS t, $2::int8 + 1 AS b', [
        new Date('2020-01-01T00:00:00Z'),
        '9007199254740993',
      ]);
      expect(rows[0]).toEqual({ t: new Date('2020-01-01T00:00:00Z'), b: '9007199254740994' });
    });
  });

  describe('errors', () => {
    // Callers log a failed statement's error whole (the gRPC server logs an internal error's cause), and the values
    // it was writing may be secrets: a key's digest, a password hash. PGlite attaches the bound parameters, and
    // PostgreSQL's `detail` repeats row values ("Key (digest)=(…) already exists", "Failing row contains (…)").
    it("carry none of the failed statement's values, on the pool and in a transaction, and log none", async () => {
      const { db } = fixture();
      const secret = `digest-${randomUUID()}`;
      await db.query(`CREATE TABLE ${schema}.secrets (digest text UNIQUE CHECK (digest NOT LIKE '%refused'))`);
      await db.query(`INSERT INTO ${schema}.secrets (digest) VALUES ($1)`, [secret]);
      const insert = (queryable: Pick<Database, 'query'>, digest: string) => queryable.query(`INSERT INTO ${schema}.secrets (digest) VALUES ($1)`, [digest]);
      const failures: [string, () => Promise<unknown>][] = [
        ['23505', () => insert(db, secret)],
        ['23514', () => insert(db, `${secret}-refused`)],
        ['23505', () => db.transaction((tx) => insert(tx, secret))],
      ];
      for (const [code, fail] of failures) {
        const error = await fail().then(
          () => null,
          (thrown: unknown) => thrown,
        );
        // Still the database's error, with what tells what failed (isUniqueViolation reads `code`).
        expect(error).toMatchObject({ code });
        expect(error).not.toHaveProperty('params');
        expect(inspect(error, { depth: 10 })).not.toContain(secret);
        const { logger, text } = memoryLogger();
        logger.error({ err: error }, 'statement failed');
        expect(text()).toContain(code);
        expect(text()).not.toContain(secret);
      }
    });
  });

  describe('transaction', () => {
    it('commits when the callback resolves', async () => {
      const { db } = fixture();
      const value = await db.transaction(async (tx) => {
        await tx.query(`INSERT INTO ${schema}.items (name) VALUES ('kept')`);
        return 42;
      });
      expect(value).toBe(42);
      expect((await db.query(`SELECT name FROM ${schema}.items`)).rows).toEqual([{ name: 'kept' }]);
    });

    it('rolls back and rethrows when the callback throws', async () => {
      const { db } = fixture();
      const failure = new Error('boom');
      await expect(
        db.transaction(async (tx) => {
          await tx.query(`INSERT INTO ${schema}.items (name) VALUES ('lost')`);
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect((await db.query(`SELECT name FROM ${schema}.items`)).rowCount).toBe(0);
    });

    it('runs afterCommit callbacks after COMMIT, and never after a rollback', async () => {
      const { db } = fixture();
      const seen: string[] = [];
      await db.transaction(async (tx) => {
        await tx.query(`INSERT INTO ${schema}.items (name) VALUES ('a')`);
        tx.afterCommit(() => seen.push('committed'));
        expect(seen).toEqual([]);
      });
      expect(seen).toEqual(['committed']);

      await expect(
        db.transaction(async (tx) => {
          tx.afterCommit(() => seen.push('rolled back'));
          throw new Error('no');
        }),
      ).rejects.toThrow('no');
      expect(seen).toEqual(['committed']);
    });

    it('does not let a query from elsewhere slip into an open transaction', async () => {
      const { db } = fixture();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      const doomed = db.transaction(async (tx) => {
        await tx.query(`INSERT INTO ${schema}.items (name) VALUES ('inside')`);
        entered();
        await gate;
        throw new Error('roll it back');
      });
      await inside;
      // Issued while the transaction is open; it must not become part of it (and so survive its rollback).
      const outside = db.query(`INSERT INTO ${schema}.items (name) VALUES ('outside')`);
      release();
      await expect(doomed).rejects.toThrow('roll it back');
      await outside;
      expect((await db.query(`SELECT name FROM ${schema}.items`)).rows).toEqual([{ name: 'outside' }]);
    });
  });

  describe('withAdvisoryLock', () => {
    it('excludes holders of the same key, across replicas', async () => {
      const { db, replica } = fixture();
      const events: string[] = [];
      const hold = (who: string, on: Database) =>
        on.withAdvisoryLock(`test:${schema}`, async (q) => {
          events.push(`${who} in`);
          await q.query('SELECT 1');
          await new Promise((r) => setTimeout(r, 50));
          events.push(`${who} out`);
        });
      await Promise.all([hold('a', db), hold('b', replica)]);
      expect(events).toHaveLength(4);
      expect(events[0]!.split(' ')[0]).toBe(events[1]!.split(' ')[0]);
      expect(events[2]!.split(' ')[0]).toBe(events[3]!.split(' ')[0]);
    });

    it('releases the lock when fn throws', async () => {
      const { db } = fixture();
      await expect(db.withAdvisoryLock(`x:${schema}`, async () => Promise.reject(new Error('inner')))).rejects.toThrow('inner');
      await expect(db.withAdvisoryLock(`x:${schema}`, async () => 'again')).resolves.toBe('again');
    });
  });

  describe('migrate', () => {
    const migrations = (target: string) => [
      { id: '0001_counter', sql: `CREATE TABLE applications (n int NOT NULL); INSERT INTO applications VALUES (1);` },
      // No IF NOT EXISTS: applying this twice would fail.
      { id: '0002_things', sql: `CREATE TABLE ${target}.things (id int PRIMARY KEY); UPDATE applications SET n = n + 1;` },
    ];

    it('creates the schema, applies pending migrations in order and records them', async () => {
      const { db } = fixture();
      const target = uniqueSchema('m');
      const applied = await migrate(db, { schema: target, migrations: migrations(target), logger: silentLogger });
      expect(applied).toEqual(['0001_counter', '0002_things']);
      // Unqualified names land in the migrated schema.
      expect((await db.query(`SELECT n FROM ${target}.applications`)).rows).toEqual([{ n: 2 }]);
      const recorded = await db.query<{ id: string; applied_at: unknown }>(`SELECT id, applied_at FROM ${target}.schema_migrations ORDER BY id`);
      expect(recorded.rows.map((r) => r.id)).toEqual(['0001_counter', '0002_things']);
      expect(recorded.rows[0]!.applied_at).toBeInstanceOf(Date);
      expect(await migrate(db, { schema: target, migrations: migrations(target), logger: silentLogger })).toEqual([]);
    });

    it('applies each migration exactly once when two replicas migrate at the same time', async () => {
      const { db, replica } = fixture();
      const target = uniqueSchema('race');
      const results = await Promise.all([
        migrate(db, { schema: target, migrations: migrations(target), logger: silentLogger }),
        migrate(replica, { schema: target, migrations: migrations(target), logger: silentLogger }),
      ]);
      expect(results.flat().sort()).toEqual(['0001_counter', '0002_things']);
      expect((await db.query(`SELECT n FROM ${target}.applications`)).rows).toEqual([{ n: 2 }]);
    });

    it('rolls back a failing migration entirely and stops there', async () => {
      const { db } = fixture();
      const target = uniqueSchema('bad');
      const bad = [
        { id: '0001_ok', sql: 'CREATE TABLE ok (id int)' },
        { id: '0002_bad', sql: 'CREATE TABLE half (id int); SELECT * FROM no_such_table;' },
        { id: '0003_after', sql: 'CREATE TABLE after_bad (id int)' },
      ];
      await expect(migrate(db, { schema: target, migrations: bad, logger: silentLogger })).rejects.toThrow(/no_such_table/);
      const recorded = await db.query<{ id: string }>(`SELECT id FROM ${target}.schema_migrations`);
      expect(recorded.rows).toEqual([{ id: '0001_ok' }]);
      const tables = await db.query(`SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name IN ('half', 'after_bad')`, [target]);
      expect(tables.rowCount).toBe(0);
    });

    it('refuses a migration edited after it was applied', async () => {
      const { db } = fixture();
      const target = uniqueSchema('identity');
      await migrate(db, { schema: target, migrations: migrations(target), logger: silentLogger });
      const edited = migrations(target).map((m) => (m.id === '0002_things' ? { ...m, sql: `${m.sql} -- tweak` } : m));
      const attempt = migrate(db, { schema: target, migrations: edited, logger: silentLogger });
      await expect(attempt).rejects.toBeInstanceOf(MigrationEditedError);
      await expect(attempt).rejects.toThrow(
        `migration 0002_things of schema ${target} was edited after it was applied; add a new migration instead`,
      );
    });

    it('rejects unsafe schema names', async () => {
      await expect(migrate(fixture().db, { schema: 'Bad-Name; drop', migrations: [], logger: silentLogger })).rejects.toThrow(
        /invalid schema name/,
      );
    });

    it('migrateService applies the runtime tables, then the service directory', async () => {
      const { db } = fixture();
      const dir = await mkdtemp(join(tmpdir(), 'migrations-'));
      try {
        await writeFile(join(dir, '0002_second.sql'), 'ALTER TABLE widgets ADD COLUMN size int;');
        await writeFile(join(dir, '0001_first.sql'), 'CREATE TABLE widgets (id int);');
        await writeFile(join(dir, 'README.md'), 'not a migration');
        expect((await loadMigrationsFromDir(dir)).map((m) => m.id)).toEqual(['0001_first', '0002_second']);
        const target = uniqueSchema('svc');
        const applied = await migrateService(db, { schema: target, dir, logger: silentLogger });
        // The runtime's own tables (outbox, processed events) first, in their order, then the service's files.
        expect(applied).toEqual([...runtimeMigrations.map((migration) => migration.id), '0001_first', '0002_second']);
        expect(applied[0]).toBe('runtime_0001_outbox');
        const tables = await db.query<{ table_name: string }>(
          `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
          [target],
        );
        expect(tables.rows.map((r) => r.table_name)).toEqual(['outbox', 'parked_events', 'processed_events', 'schema_migrations', 'widgets']);

        await writeFile(join(dir, '3_bad.sql'), 'SELECT 1');
        await expect(loadMigrationsFromDir(dir)).rejects.toThrow(/NNNN_name\.sql/);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
}
