import type { Logger } from '../logging/logger';
import { runtimeMigrationsFor } from '../outbox/migrations';
import { migrate, pendingMigrations, type MigrationSource } from './migrate';
import { loadMigrationsFromDir } from './migration-files';
import type { Database } from './port';

/** One service's migrations in the order they apply: the runtime's own tables (outbox, processed_events), then `dir`'s. */
export async function serviceMigrations(schema: string, dir: string): Promise<MigrationSource[]> {
  return [...runtimeMigrationsFor(schema), ...(await loadMigrationsFromDir(dir))];
}

/**
 * Migrates one service's schema: the runtime's own tables (outbox, processed_events) first, then the
 * service's `NNNN_name.sql` files from `dir`. Returns the ids applied.
 */
export async function migrateService(db: Database, options: { schema: string; dir: string; logger: Logger }): Promise<string[]> {
  return migrate(db, { schema: options.schema, logger: options.logger, migrations: await serviceMigrations(options.schema, options.dir) });
}

/** The ids of one service's migrations not yet applied, applying nothing (`pendingMigrations`). */
export async function pendingServiceMigrations(db: Database, options: { schema: string; dir: string }): Promise<string[]> {
  return pendingMigrations(db, { schema: options.schema, migrations: await serviceMigrations(options.schema, options.dir) });
}
