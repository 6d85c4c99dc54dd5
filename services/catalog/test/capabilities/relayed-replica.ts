import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createMemoryCache, createPostgresDatabase, loadSecrets, type Logger } from '@platform/runtime';
import { grpcClients, startPostgresRelay, unique, type TcpProxy, type TestPlatform } from '@platform/test';
import type { CatalogDeps } from '../../src/deps';
import { DiscoverySlots } from '../../src/domain/discovery-slots';
import { RefreshLeases } from '../../src/domain/refresh-leases';

/** A catalog replica built by a test beside the platform's own, whose database the test can cut. */
export interface RelayedReplica {
  deps: CatalogDeps;
  /** Between the replica's pool and the platform's database: `cut()` drops every connection, `restore()` lets them through. */
  relay: TcpProxy;
  close(): Promise<void>;
}

/**
 * A second catalog replica over the platform's database, reached through a relay: as one replica whose database goes
 * away while the platform (and the test's reads through it) keeps its own. `configure` adjusts the replica's config.
 */
export async function startRelayedReplica(
  platform: TestPlatform,
  logger: Logger,
  options: { poolMax: number; configure?: (config: CatalogDeps['config']) => CatalogDeps['config'] },
): Promise<RelayedReplica> {
  const relay = await startPostgresRelay(platform.env.DATABASE_URL!);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'relayed-replica-'));
  const db = createPostgresDatabase({ url: relay.url, poolMax: options.poolMax, logger, timeouts: { connectMs: 2_000 } });
  const { config } = platform.platform.context;
  const secrets = await loadSecrets({ encryptionKey: platform.env.ENCRYPTION_KEY, apiKeyPepper: platform.env.API_KEY_PEPPER, dataDir, embedded: false, logger });
  const clients = grpcClients(platform);
  const deps: CatalogDeps = {
    db,
    cache: createMemoryCache({ keyPrefix: unique('relayed-replica') }),
    logger,
    config: options.configure ? options.configure(config) : config,
    secrets,
    clients,
    discoverySlots: new DiscoverySlots(),
    refreshLeases: new RefreshLeases(),
  };
  return {
    deps,
    relay,
    async close() {
      relay.restore();
      await db.close();
      await relay.close();
      await clients.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
