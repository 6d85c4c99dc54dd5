import type { Attributes } from '@opentelemetry/api';
import { Client, Pool, types as pgTypes, type PoolClient, type PoolConfig, type QueryResult as PgQueryResult } from 'pg';
import type { Logger } from '../logging/logger';
import type { Database, Queryable, QueryOptions, QueryResult, Transaction } from './port';
import { runAfterCommit } from './after-commit';
import { tracedQuery } from './traced-query';
import { withoutBoundValues } from './query-error';
import { DatabaseUnavailableError } from './errors';
import { sqlStateOf } from './sql-state';
import { unavailableOr } from './unavailable';
import { OID, parseInt8, parseUtcDate, parseUtcTimestamp } from './type-parsers';

export interface PostgresDatabaseOptions {
  url: string;
  poolMax: number;
  logger: Logger;
  /** Shown in pg_stat_activity; helps tell services apart on a shared server. */
  applicationName?: string;
  /** Overrides of POOL_TIMEOUTS (tests shorten them). */
  timeouts?: Partial<typeof POOL_TIMEOUTS>;
}

/**
 * How long a pooled statement may wait for a database that does not answer (docs/architecture.md, When a dependency
 * fails). Without them a stalled server (a hung network or proxy: the connection stays open, nothing comes back) held
 * every pooled connection for good, and every later statement waited for one for ever. Each bound reached is a
 * DatabaseUnavailableError (503).
 * - `connectMs`: for a free pooled connection, or a new one to open (pg-pool's `connectionTimeoutMillis`).
 * - `statementMs`: PostgreSQL's `statement_timeout`: the server cancels a statement that runs longer (a lock wait).
 * - `readMs`: the driver's own `query_timeout`, for a server that answers nothing at all and so cancels nothing; the
 *   connection is then dropped, never reused. Longer than `statementMs`: a slow server says so itself first.
 * Migrations run on their own connection (withAdvisoryLock) without the statement bounds (an index build may take
 * long); only its opening is bounded by `connectMs`.
 */
export const POOL_TIMEOUTS = { connectMs: 5_000, statementMs: 30_000, readMs: 35_000 };

/** Per-pool type parsers (never the global pg registry, which other code in the process may rely on). */
const typeParsers: NonNullable<PoolConfig['types']> = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (format !== 'binary') {
      if (oid === OID.INT8) return parseInt8;
      if (oid === OID.TIMESTAMP) return parseUtcTimestamp;
      if (oid === OID.DATE) return parseUtcDate;
    }
    return pgTypes.getTypeParser(oid, format ?? 'text');
  }) as NonNullable<PoolConfig['types']>['getTypeParser'],
};

type PgRunner = Pick<PoolClient, 'query'>;

/**
 * Runs a statement; several statements in one text (migrations) return the last one's result. A failed
 * statement's error loses the row values PostgreSQL reports in it (withoutBoundValues) before anyone can log it.
 */
async function runQuery<Row>(
  runner: PgRunner,
  spanAttributes: Attributes,
  sql: string,
  params?: readonly unknown[],
  options?: QueryOptions,
): Promise<QueryResult<Row>> {
  const values = params && params.length > 0 ? [...params] : undefined;
  return tracedQuery(spanAttributes, sql, values !== undefined, async () => {
    let raw: PgQueryResult | PgQueryResult[];
    try {
      raw = (options?.prepared ? await runner.query({ name: options.prepared, text: sql, values }) : await runner.query(sql, values)) as
        | PgQueryResult
        | PgQueryResult[];
    } catch (error) {
      throw withoutBoundValues(error);
    }
    const result = Array.isArray(raw) ? raw[raw.length - 1]! : raw;
    return { rows: (result?.rows ?? []) as Row[], rowCount: result?.rowCount ?? 0 };
  }).catch((error: unknown) => {
    // After the span has recorded the driver's own error (its SQLSTATE or code).
    throw unavailableOr(error);
  });
}

/**
 * Where the statements run, for their spans (OTel PostgreSQL conventions): host, port and database as pg resolves
 * the configuration (URL, PG* variables, defaults), read from a client that never connects; never user or password.
 * `db.namespace` is the database alone: no connection sets a schema (every table name is schema-qualified).
 */
function connectionSpanAttributes(connection: PoolConfig): Attributes {
  const resolved = new Client(connection);
  return { 'server.address': resolved.host, 'server.port': resolved.port, ...(resolved.database ? { 'db.namespace': resolved.database } : {}) };
}

export function createPostgresDatabase(options: PostgresDatabaseOptions): Database {
  const connection: PoolConfig = {
    connectionString: options.url,
    application_name: options.applicationName ?? 'mcp-platform',
    types: typeParsers,
  };
  const spanAttributes = connectionSpanAttributes(connection);
  const timeouts = { ...POOL_TIMEOUTS, ...options.timeouts };
  const pool = new Pool({
    ...connection,
    max: options.poolMax,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: timeouts.connectMs,
    statement_timeout: timeouts.statementMs,
    query_timeout: timeouts.readMs,
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', (error) => options.logger.warn({ err: { name: error.name, message: error.message } }, 'idle postgres client failed'));

  return {
    kind: 'postgres',

    query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: QueryOptions) {
      return runQuery<Row>(pool, spanAttributes, sql, params, options);
    },

    async transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
      const client = await pool.connect().catch((error: unknown) => {
        throw unavailableOr(error);
      });
      const callbacks: Array<() => void> = [];
      // Set when the connection may be left mid-transaction or dead: the pool then drops it.
      let broken: Error | undefined;
      // A checked-out client has no listener of the pool's: its connection failing mid-transaction was an unhandled
      // 'error' event, which ends the process. The statement in flight (or the next) fails on its own.
      const lost = (error: Error) => void (broken ??= error);
      client.on('error', lost);
      try {
        await runQuery(client, spanAttributes, 'BEGIN');
        const tx: Transaction = {
          query: <Row = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: QueryOptions) =>
            runQuery<Row>(client, spanAttributes, sql, params, options),
          afterCommit: (callback) => void callbacks.push(callback),
        };
        let result: T;
        try {
          result = await fn(tx);
        } catch (error) {
          // A connection lost or not answering has nothing to roll back (the server does so as it ends): drop it.
          if (error instanceof DatabaseUnavailableError) throw error;
          try {
            await runQuery(client, spanAttributes, 'ROLLBACK');
          } catch (rollbackError) {
            broken = rollbackError as Error;
          }
          throw error;
        }
        try {
          await runQuery(client, spanAttributes, 'COMMIT');
        } catch (error) {
          if (isConnectionError(error)) broken = error as Error;
          throw error;
        }
        runAfterCommit(callbacks, options.logger);
        return result;
      } catch (error) {
        if (error instanceof DatabaseUnavailableError) broken ??= error;
        throw error;
      } finally {
        client.removeListener('error', lost);
        client.release(broken);
      }
    },

    async withAdvisoryLock<T>(key: string, fn: (db: Queryable) => Promise<T>): Promise<T> {
      // A dedicated connection outside the pool: a session lock must stay on one session, and holding it
      // must never take a pool slot that `fn` itself may need. Its statements are unbounded (a migration's index
      // build, the wait for another replica's lock), its opening is not: a stalled server fails a start, not hangs it.
      const client = new Client({ ...connection, connectionTimeoutMillis: timeouts.connectMs });
      client.on('error', (error) => options.logger.warn({ err: { name: error.name, message: error.message } }, 'advisory lock connection failed'));
      await client.connect();
      try {
        await runQuery(client, spanAttributes, 'SELECT pg_advisory_lock(hashtextextended($1, 0))', [key]);
        try {
          return await fn({ query: (sql, params) => runQuery(client, spanAttributes, sql, params) });
        } finally {
          await runQuery(client, spanAttributes, 'SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]);
        }
      } finally {
        await client.end();
      }
    },

    async ping() {
      await runQuery(pool, spanAttributes, 'SELECT 1');
    },

    async close() {
      await pool.end();
    },
  };
}

/** Errors from the server carry a SQLSTATE; a connection failure has none (or class 08). */
function isConnectionError(error: unknown): boolean {
  const state = sqlStateOf(error);
  return state === undefined || state.startsWith('08');
}
