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
    const applied = await appliedChecksums(db, schema);

    const newlyApplied: string[] = [];
    for (const migration of options.migrations) {
      if (wasApplied(migration, applied, schema)) continue;
      const checksum = migrationChecksum(migration.sql);
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

/**
 * The ids of `migrations` not yet applied to `schema`, in order, applying nothing and taking no lock (one being applied
 * meanwhile counts as pending). Throws MigrationEditedError, as `migrate` would, for an applied one whose text changed.
 */
export async function pendingMigrations(db: Database, options: Omit<MigrateOptions, 'logger'>): Promise<string[]> {
  const schema = assertSchemaName(options.schema);
  assertUniqueIds(options.migrations);
  const { rows } = await db.query(
    `SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'schema_migrations'`,
    [schema],
  );
  const applied = rows.length > 0 ? await appliedChecksums(db, schema) : new Map<string, string>();
  return options.migrations.filter((migration) => !wasApplied(migration, applied, schema)).map((migration) => migration.id);
}

async function appliedChecksums(db: Database, schema: string): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; checksum: string }>(`SELECT id, checksum FROM ${schema}.schema_migrations`);
  return new Map(rows.map((row) => [row.id, row.checksum]));
}

/** Whether `migration` is recorded as applied; throws when it was, with other text. */
function wasApplied(migration: MigrationSource, applied: ReadonlyMap<string, string>, schema: string): boolean {
  const previous = applied.get(migration.id);
  if (previous === undefined) return false;
  if (previous !== migrationChecksum(migration.sql)) throw new MigrationEditedError(migration.id, schema);
  return true;
}

function assertUniqueIds(migrations: readonly MigrationSource[]): void {
  const seen = new Set<string>();
  for (const { id } of migrations) {
    if (seen.has(id)) throw new InvalidMigrationError(`migration id ${id} appears twice`);
    seen.add(id);
  }
}
