import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InvalidMigrationError } from './errors';
import type { MigrationSource } from './migrate';

const MIGRATION_FILE = /^\d{4}_[a-z0-9_]+\.sql$/;

/** Reads `NNNN_name.sql` files from `dir`, sorted by name. Any other `.sql` file is a mistake and throws. */
export async function loadMigrationsFromDir(dir: string): Promise<MigrationSource[]> {
  const names = (await readdir(dir)).filter((name) => name.endsWith('.sql')).sort();
  const misnamed = names.filter((name) => !MIGRATION_FILE.test(name));
  if (misnamed.length > 0) {
    throw new InvalidMigrationError(`migration files must be named NNNN_name.sql (lower case): ${misnamed.join(', ')} in ${dir}`);
  }
  return Promise.all(
    names.map(async (name) => ({ id: name.slice(0, -'.sql'.length), sql: await readFile(join(dir, name), 'utf8') })),
  );
}
