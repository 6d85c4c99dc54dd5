import type { Cache, Database, Logger, PlatformConfig, Secrets, ServiceClients } from '@platform/runtime';
import type { DiscoverySlots } from './domain/discovery-slots';
import type { RefreshLeases } from './domain/refresh-leases';

/** What the catalog service's domain and store functions work with. */
export interface CatalogDeps {
  db: Database;
  cache: Cache;
  logger: Logger;
  config: PlatformConfig;
  /** Seals upstream credentials at rest (secretBox). */
  secrets: Secrets;
  /** Other services over gRPC: people, teams and memberships are identity's, asked through `clients.identity`. */
  clients: ServiceClients;
  /** How many discoveries this process runs at once, in all and per team (discovery-slots.ts). */
  discoverySlots: DiscoverySlots;
  /** Which servers this process is refreshing now, and the refresh leases it holds (refresh-leases.ts). */
  refreshLeases: RefreshLeases;
}

/** The schema this service owns; every SQL statement names it. */
export const SCHEMA = 'catalog';
