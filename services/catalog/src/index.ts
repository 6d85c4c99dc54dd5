import path from 'node:path';
import { defineService } from '@platform/runtime';
import { CatalogServiceService } from '@platform/proto/gen/platform/catalog/v1/catalog';
import type { CatalogDeps } from './deps';
import { callRecordRetention } from './domain/call-retention';
import { DiscoverySlots } from './domain/discovery-slots';
import { healthChecker } from './domain/health-checker';
import { RefreshLeases } from './domain/refresh-leases';
import { scheduledRefresh } from './domain/scheduled-refresh';
import { callRecordsConsumer } from './events/call-records-consumer';
import { createCatalogServiceHandlers } from './grpc/handlers';

/** MCP servers, their capabilities and approvals, publishing, gateways and the records of calls made through them. */
export const catalogService = defineService({
  name: 'catalog',
  grpc: { definition: CatalogServiceService, fullName: 'platform.catalog.v1.CatalogService' },
  migrationsDir: path.join(__dirname, 'store', 'migrations'),
  create(context) {
    const deps: CatalogDeps = {
      db: context.db,
      cache: context.cache,
      logger: context.logger,
      config: context.config,
      secrets: context.secrets,
      clients: context.clients,
      discoverySlots: new DiscoverySlots(),
      refreshLeases: new RefreshLeases(),
    };
    // Health checks, scheduled re-discovery and call-record retention (src/domain); each null when turned off.
    const background = [healthChecker(deps), scheduledRefresh(deps), callRecordRetention(deps)].filter((task) => task !== null);
    return { handlers: createCatalogServiceHandlers(deps), background };
  },
  consumers: (context) => [callRecordsConsumer(context)],
});

export type { CatalogDeps } from './deps';
