import type { PlatformConfig } from '../config/load';
import type { Logger } from '../logging/logger';
import { createPgliteDatabase } from './pglite';
import type { Database } from './port';
import { createPostgresDatabase } from './postgres';

/** The database adapter the configuration asks for: real Postgres when DATABASE_URL is set, else PGlite. */
export function createDatabase(storage: PlatformConfig['storage'], logger: Logger, applicationName?: string): Database {
  if (storage.kind === 'postgres') {
    return createPostgresDatabase({ url: storage.url, poolMax: storage.poolMax, logger, ...(applicationName ? { applicationName } : {}) });
  }
  return createPgliteDatabase({ dataDir: storage.dataDir, logger });
}
