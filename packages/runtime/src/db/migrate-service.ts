import type { Logger } from '../logging/logger';
import { runtimeMigrationsFor } from '../outbox/migrations';
import { migrate } from './migrate';
import { loadMigrationsFromDir } from './migration-files';
import type { Database } from './port';

/**
 * Migrates one service's schema: the runtime's own tables (outbox, processed_events) first, then the
 * service's `NNNN_name.sql` files from `dir`. Returns the ids applied.
 */
export async function migrateService(db: Database, options: { schema: string; dir: string; logger: Logger }): Promise<string[]> {
  const own = await loadMigrationsFromDir(options.dir);
  return migrate(db, { schema: options.schema, logger: options.logger, migrations: [...runtimeMigrationsFor(options.schema), ...own] });
}
