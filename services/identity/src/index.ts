import path from 'node:path';
import { defineService } from '@platform/runtime';
import { IdentityServiceService } from '@platform/proto/gen/platform/identity/v1/identity';
import type { IdentityDeps } from './deps';
import { expiredGrantPruning } from './domain/oauth/pruning';
import { ensureBootstrapAdmin } from './domain/people';
import { sessionRetention } from './domain/session-retention';
import { auditStoreConsumer } from './events/audit-consumer';
import { createIdentityHandlers } from './grpc/handlers';

/**
 * People, teams and memberships, sign-in sessions, API keys, service accounts, the audit log and maintenance
 * mode; the edge authenticates every request here.
 */
export const identityService = defineService({
  name: 'identity',
  grpc: { definition: IdentityServiceService, fullName: 'platform.identity.v1.IdentityService' },
  migrationsDir: path.join(__dirname, 'store', 'migrations'),
  async create(context) {
    const deps: IdentityDeps = {
      db: context.db,
      secrets: context.secrets,
      cache: context.cache,
      logger: context.logger,
      config: context.config,
    };
    await ensureBootstrapAdmin(deps, context.config.env);
    // Deleting what has expired or is past its retention (src/domain), in chunks, shared between replicas; null when off.
    const background = [expiredGrantPruning(deps), sessionRetention(deps)].filter((task) => task !== null);
    return { handlers: createIdentityHandlers(deps), background };
  },
  consumers: (context) => [auditStoreConsumer(context)],
});

export { createOrResetAdmin } from './domain/people';
export type { IdentityDeps } from './deps';
