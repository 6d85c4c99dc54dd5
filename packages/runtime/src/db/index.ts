export * from './port';
export * from './errors';
export { createPostgresDatabase, type PostgresDatabaseOptions } from './postgres';
export { createPgliteDatabase, type PgliteDatabaseOptions } from './pglite';
export { createDatabase } from './create';
export { migrate, migrationChecksum, type MigrateOptions, type MigrationSource } from './migrate';
export { loadMigrationsFromDir } from './migration-files';
export { migrateService } from './migrate-service';
export { assertSchemaName } from './schema-name';
