import { onCatalogChange, type Cache, type Logger, type ServiceClients } from '@platform/runtime';
import { buildExposure, type GatewayExposure } from './exposure';

/** A gateway's exposure plus what the data plane says about its team (identity tokens carry the team's slug). */
export interface ResolvedGateway {
  exposure: GatewayExposure;
  teamSlug: string;
}

/**
 * This replica's memory of what each gateway exposes. An entry lives until the catalog announces a change that
 * may touch it (every replica hears the signal) or, as a safety net against a lost signal, `ttlMs`. Concurrent
 * misses share one catalog call. Listeners hear which gateways changed (the data plane tells connected clients).
 */
export class GatewayExposures {
  private readonly entries = new Map<string, { value: ResolvedGateway; expiresAt: number }>();
  private readonly loading = new Map<string, Promise<ResolvedGateway>>();
  private readonly listeners = new Set<(gatewayIds: string[]) => void>();
  private unsubscribe: (() => Promise<void>) | undefined;
  /** Bumped by every change signal, so a load that raced a change is not kept. */
  private epoch = 0;

  constructor(
    private readonly clients: ServiceClients,
    private readonly logger: Logger,
    private readonly ttlMs = 30_000,
  ) {}

  async listen(cache: Cache): Promise<void> {
    this.unsubscribe = await onCatalogChange(cache, (gatewayIds) => this.forget(gatewayIds));
  }

  async close(): Promise<void> {
    await this.unsubscribe?.();
  }

  onChange(listener: (gatewayIds: string[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  forget(gatewayIds: string[]): void {
    this.epoch++;
    if (gatewayIds.length === 0) this.entries.clear();
    else for (const [slug, entry] of this.entries) if (gatewayIds.includes(entry.value.exposure.runtime.gateway!.id)) this.entries.delete(slug);
    for (const listener of this.listeners) {
      try {
        listener(gatewayIds);
      } catch (error) {
        this.logger.warn({ err: error }, 'a catalog change listener failed');
      }
    }
  }

  async get(slug: string): Promise<ResolvedGateway> {
    const entry = this.entries.get(slug);
    if (entry && entry.expiresAt > Date.now()) return entry.value;
    let pending = this.loading.get(slug);
    if (!pending) {
      pending = this.load(slug).finally(() => this.loading.delete(slug));
      this.loading.set(slug, pending);
    }
    return pending;
  }

  private async load(slug: string): Promise<ResolvedGateway> {
    const epoch = this.epoch;
    const runtime = await this.clients.catalog.resolveGateway({ slug });
    const team = await this.clients.identity.getTeam({ teamRef: runtime.gateway!.teamId });
    const value: ResolvedGateway = { exposure: buildExposure(runtime), teamSlug: team.slug };
    if (epoch === this.epoch) this.entries.set(slug, { value, expiresAt: Date.now() + this.ttlMs });
    return value;
  }
}
