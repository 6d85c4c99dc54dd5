import { AppError } from '../errors/app-error';

/** Thrown when a schema name would not be a safe, unquoted SQL identifier. */
export class InvalidSchemaNameError extends Error {
  constructor(readonly schema: string) {
    super(`invalid schema name ${JSON.stringify(schema)}: must match ^[a-z][a-z0-9_]*$`);
    this.name = 'InvalidSchemaNameError';
  }
}

/** Thrown when an already-applied migration's SQL no longer matches what was applied. */
export class MigrationEditedError extends Error {
  constructor(
    readonly migrationId: string,
    readonly schema: string,
  ) {
    super(`migration ${migrationId} of schema ${schema} was edited after it was applied; add a new migration instead`);
    this.name = 'MigrationEditedError';
  }
}

/** Thrown when a migration file or list is malformed (bad name, duplicate id). */
export class InvalidMigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidMigrationError';
  }
}

/**
 * Thrown on PGlite when the outer `db` is used inside `db.transaction(fn)`: PGlite is one connection, so that
 * query would wait for the transaction that is waiting for it. Use the `tx` passed to `fn` instead.
 */
export class NestedDatabaseUseError extends Error {
  constructor() {
    super('the database was used directly inside db.transaction(); use the transaction handle (tx) passed to the callback');
    this.name = 'NestedDatabaseUseError';
  }
}

/**
 * The database could not run a statement: no connection (refused, lost, none free in time), no answer in time, or a
 * server that is shutting down. An AppError `unavailable` (503, gRPC UNAVAILABLE: an idempotent call is retried
 * within its deadline), so a database outage is a dependency failure to its callers, not an internal error; the
 * driver's error is the cause (logged, never sent).
 */
export class DatabaseUnavailableError extends AppError {
  constructor(cause: unknown) {
    super('unavailable', 'Service unavailable; try again shortly', { cause });
    this.name = 'DatabaseUnavailableError';
  }
}
