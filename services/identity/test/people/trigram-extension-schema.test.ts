import path from 'node:path';
import { Client } from 'pg';
import { createLogger, createPostgresDatabase, loadMigrationsFromDir, migrate } from '@platform/runtime';
import { createTestDatabase, describeWith, infraUrl } from '@platform/test';

/**
 * Migration 0011 makes its trigram indexes wherever pg_trgm lives: managed services often keep extensions in a schema
 * of their own (`extensions`), created beforehand by an administrator, outside the identity schema's search path.
 */
describeWith('postgres', 'identity migrations with pg_trgm in a schema of its own', () => {
  it('creates the people search indexes with the operator class of that schema', async () => {
    const scratch = await createTestDatabase(infraUrl('postgres')!);
    const admin = new Client({ connectionString: scratch.url });
    await admin.connect();
    const db = createPostgresDatabase({ url: scratch.url, poolMax: 2, logger: createLogger({ level: 'silent' }) });
    try {
      await admin.query('CREATE SCHEMA extensions');
      await admin.query('CREATE EXTENSION pg_trgm SCHEMA extensions');
      const migrations = await loadMigrationsFromDir(path.join(__dirname, '../../src/store/migrations'));
      await migrate(db, { schema: 'identity', migrations, logger: createLogger({ level: 'silent' }) });
      const { rows } = await admin.query<{ indexdef: string }>(
        `SELECT indexdef FROM pg_indexes WHERE schemaname = 'identity' AND indexname LIKE 'people_%_trigrams' ORDER BY indexname`,
      );
      expect(rows.map((row) => row.indexdef)).toEqual([
        expect.stringMatching(/USING gin \(display_name extensions\.gin_trgm_ops\)/),
        expect.stringMatching(/USING gin \(email extensions\.gin_trgm_ops\)/),
      ]);
    } finally {
      await db.close();
      await admin.end();
      await scratch.drop();
    }
  }, 60_000);
});
