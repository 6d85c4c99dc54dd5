import { createTestDatabase } from '@platform/test';
import { createPostgresDatabase, type Database } from '../../src/db';
import { createLogger } from '../../src/logging/logger';

/**
 * A fresh database on the test PostgreSQL server for the enclosing describe block: created, with a pool of `poolMax`
 * connections, before its tests and dropped after them. Call inside `describeWith('postgres', …)`; read the database
 * through the returned getter in tests (it exists only once `beforeAll` has run).
 */
export function scratchPostgres(adminUrl: () => string, poolMax: number): () => Database {
  let testDb: { url: string; drop(): Promise<void> } | undefined;
  let db: Database | undefined;
  beforeAll(async () => {
    testDb = await createTestDatabase(adminUrl());
    db = createPostgresDatabase({ url: testDb.url, poolMax, logger: createLogger({ level: 'silent' }) });
  });
  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });
  return () => db!;
}
