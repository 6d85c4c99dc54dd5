import type { Cache, Database, Logger, PlatformConfig, Secrets } from '@platform/runtime';

/** What the identity service's domain and store functions work with. */
export interface IdentityDeps {
  db: Database;
  secrets: Secrets;
  cache: Cache;
  logger: Logger;
  config: PlatformConfig;
}

/** The schema this service owns; every SQL statement names it. */
export const SCHEMA = 'identity';

/** The platform-owned team (created by migration 0002) holding platform-level resources and audit entries. */
export { PLATFORM_TEAM_ID } from '@platform/runtime';
