import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdirSync } from 'node:fs';
import { PGlite, types as pgliteTypes, type Results } from '@electric-sql/pglite';
import type { Logger } from '../logging/logger';
import { runAfterCommit } from './after-commit';
import { lockDataDir } from './data-dir-lock';
import { NestedDatabaseUseError } from './errors';
import { loadPgliteArtifacts } from './pglite-artifacts';
import { AsyncMutex } from './mutex';
import { withoutBoundValues } from './query-error';
import type { Database, Queryable, QueryResult, Transaction } from './port';
import { tracedQuery } from './traced-query';
import { OID, parseInt8, parseUtcDate, parseUtcTimestamp } from './type-parsers';

export interface PgliteDatabaseOptions {
  /** A directory to persist under, or `memory://` for a throwaway database (tests). */
  dataDir: string;
  logger: Logger;
}

const DML = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE', 'COPY']);

/** pg's `rowCount`: affected rows for DML, returned rows otherwise (PGlite reports `affectedRows`). */
function normalise<Row>(result: Results<Row>): QueryResult<Row> {
  const command = (result as { command?: string }).command?.toUpperCase() ?? '';
  const rowCount = DML.has(command) ? (result.affectedRows ?? 0) : result.rows.length;
  return { rows: result.rows, rowCount };
}

/**
 * Embedded Postgres (WASM) for `--target=all` and tests. PGlite is ONE connection, so every top-level query
 * and every transaction goes through one FIFO mutex: a query from elsewhere can never slip into another
 * caller's open transaction.
 *
 * Inside `db.transaction(fn)`, use the `tx` handed to `fn`. Using the outer `db` there would wait for the
 * very transaction it runs in; that is detected and thrown as `NestedDatabaseUseError` instead of hanging.
 */
export function createPgliteDatabase(options: PgliteDatabaseOptions): Database {
  const persistent = !options.dataDir.startsWith('memory://');
  if (persistent) mkdirSync(options.dataDir, { recursive: true });
  const release = persistent ? lockDataDir(options.dataDir) : () => undefined;
  const opening = loadPgliteArtifacts().then(
    (artifacts) =>
      new PGlite(options.dataDir, {
        ...artifacts,
        parsers: {
          [pgliteTypes.INT8]: parseInt8,
          [OID.TIMESTAMP]: parseUtcTimestamp,
          [OID.DATE]: parseUtcDate,
        },
      }),
  );
  // Surfaced by the first query; never an unhandled rejection.
  opening.catch(() => undefined);
  const mutex = new AsyncMutex();
  // Marks the async context of a running transaction callback, to detect use of the outer `db` inside it.
  const insideTransaction = new AsyncLocalStorage<{ active: boolean }>();
  const lockQueues = new Map<string, AsyncMutex>();

  // Several statements in one text (migrations) need the simple protocol, which PGlite calls `exec`.
  // A failed statement's error loses the parameters PGlite attaches to it before anyone can log it.
  async function run<Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>> {
    const parameterised = params !== undefined && params.length > 0;
    // In-process: no server address or port to name, and its database name is PGlite's own, not configured.
    return tracedQuery({}, sql, parameterised, async () => {
      const pg = await opening;
      try {
        if (parameterised) return normalise(await pg.query<Row>(sql, [...params]));
        const results = await pg.exec(sql);
        const last = results[results.length - 1];
        return last ? normalise(last as Results<Row>) : { rows: [], rowCount: 0 };
      } catch (error) {
        throw withoutBoundValues(error);
      }
    });
  }

  function assertNotNested(): void {
    if (insideTransaction.getStore()?.active) throw new NestedDatabaseUseError();
  }

  const db: Database = {
    kind: 'pglite',

    query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]) {
      assertNotNested();
      return mutex.run(() => run<Row>(sql, params));
    },

    async transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
      assertNotNested();
      const callbacks: Array<() => void> = [];
      const result = await mutex.run(async () => {
        await run('BEGIN');
        const marker = { active: true };
        const tx: Transaction = {
          query: <Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]) => run<Row>(sql, params),
          afterCommit: (callback) => void callbacks.push(callback),
        };
        try {
          const value = await insideTransaction.run(marker, () => fn(tx));
          marker.active = false;
          await run('COMMIT');
          return value;
        } catch (error) {
          marker.active = false;
          await run('ROLLBACK').catch((rollbackError: unknown) =>
            options.logger.error({ err: rollbackError }, 'pglite rollback failed'),
          );
          throw error;
        }
      });
      runAfterCommit(callbacks, options.logger);
      return result;
    },

    /**
     * PGlite lives in one process and one session, where a Postgres advisory lock is re-entrant and so excludes
     * nothing: the lock is an in-process mutex per key instead, which is exact because nothing else can open
     * this data directory at the same time.
     */
    async withAdvisoryLock<T>(key: string, fn: (db: Queryable) => Promise<T>): Promise<T> {
      let queue = lockQueues.get(key);
      if (!queue) lockQueues.set(key, (queue = new AsyncMutex()));
      return queue.run(() => fn(db));
    },

    async ping() {
      await db.query('SELECT 1');
    },

    async close() {
      try {
        await mutex.run(async () => (await opening).close());
      } finally {
        release();
      }
    },
  };
  return db;
}
