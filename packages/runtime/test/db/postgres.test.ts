import { createTestDatabase, describeWith } from '@platform/test';
import { createPostgresDatabase, type Database } from '../../src/db';
import { databaseContract, silentLogger } from './database-contract';

describeWith('postgres', 'Postgres database', (adminUrl) => {
  let testDb: { url: string; drop(): Promise<void> };
  let db: Database;
  let replica: Database;
  beforeAll(async () => {
    testDb = await createTestDatabase(adminUrl());
    db = createPostgresDatabase({ url: testDb.url, poolMax: 4, logger: silentLogger, applicationName: 'db-contract' });
    replica = createPostgresDatabase({ url: testDb.url, poolMax: 4, logger: silentLogger });
  });
  afterAll(async () => {
    await Promise.all([db?.close(), replica?.close()]);
    await testDb?.drop();
  });

  databaseContract(() => ({ db, replica }));

  it('pings', async () => {
    await expect(db.ping()).resolves.toBeUndefined();
  });
});
