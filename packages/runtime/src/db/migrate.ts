import { createHash } from 'node:crypto';
import type { Logger } from '../logging/logger';
import { InvalidMigrationError, MigrationEditedError } from './errors';
import type { Database } from './port';
import { assertSchemaName } from './schema-name';

/** One migration: `id` is its file name without `.sql` (for example `0001_init`). */
export interface MigrationSource {
  id: string;
  sql: string;
}

export interface MigrateOptions {
  schema: string;
  migrations: readonly MigrationSource[];
  logger: Logger;
}

export function migrationChecksum(sql: string): string {
  return createHash('sha256').update(sql).digest('hex');
}

/**
 * Applies pending migrations to `schema`, in the order given, each in its own transaction with
 * `search_path` set to the schema (so unqualified names land there). Everything runs under the advisory lock
 * `migrate:<schema>`, so replicas starting together apply each migration exactly once. Returns the ids applied.
 */
export async function migrate(db: Database, options: MigrateOptions): Promise<string[]> {
  const schema = assertSchemaName(options.schema);
  assertUniqueIds(options.migrations);
  return db.withAdvisoryLock(`migrate:${schema}`, async () => {
    await db.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await db.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (
         id text PRIMARY KEY,
         checksum text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const { rows } = await db.query<{ id: string; checksum: string }>(`SELECT id, checksum FROM ${schema}.schema_migrations`);
    const applied = new Map(rows.map((row) => [row.id, row.checksum]));

    const newlyApplied: string[] = [];
    for (const migration of options.migrations) {
      const checksum = migrationChecksum(migration.sql);
      const previous = applied.get(migration.id);
      if (previous !== undefined) {
        if (previous !== checksum) throw new MigrationEditedError(migration.id, schema);
        continue;
      }
      await db.transaction(async (tx) => {
        await tx.query(`SET LOCAL search_path TO ${schema}, public`);
        await tx.query(migration.sql);
        await tx.query(`INSERT INTO ${schema}.schema_migrations (id, checksum) VALUES ($1, $2)`, [migration.id, checksum]);
      });
      options.logger.info({ schema, migration: migration.id }, 'migration applied');
      newlyApplied.push(migration.id);
    }
    return newlyApplied;
  });
}

function assertUniqueIds(migrations: readonly MigrationSource[]): void {
  const seen = new Set<string>();
  for (const { id } of migrations) {
    if (seen.has(id)) throw new InvalidMigrationError(`migration id ${id} appears twice`);
    seen.add(id);
  }
}
