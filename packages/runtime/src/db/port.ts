/** The Postgres port. Two adapters implement it: `pg` against a real server, and embedded PGlite. */

export interface QueryResult<Row> {
  rows: Row[];
  rowCount: number;
}

export interface QueryOptions {
  /**
   * Prepares the statement under this name on each connection and reuses it (`pg` named statements): for hot
   * statements whose planning costs more than their execution. One name, one SQL text. PGlite ignores it.
   */
  prepared?: string;
}

export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<Row>>;
}

export interface Transaction extends Queryable {
  /** Registers work to run once the transaction has committed (never on rollback), e.g. nudging the outbox relay. */
  afterCommit(fn: () => void): void;
}

export interface Database extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  /** Runs `fn` while holding the session-level advisory lock named by `key` (hashed to a bigint). */
  withAdvisoryLock<T>(key: string, fn: (db: Queryable) => Promise<T>): Promise<T>;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
