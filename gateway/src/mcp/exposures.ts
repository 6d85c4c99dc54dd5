import { catalogGenerationOf, gatewaysNamedIn, type Cache, type GenerationView, type Logger, type ServiceClients } from '@platform/runtime';
import { buildExposure, type GatewayExposure } from './exposure';

/** A gateway's exposure plus what the data plane says about its team (identity tokens carry the team's slug). */
export interface ResolvedGateway {
  exposure: GatewayExposure;
  teamSlug: string;
}

interface Entry {
  value: ResolvedGateway;
  /** The catalog generation it was loaded under: usable only while that is the current one. */
  generation: string;
  expiresAt: number;
}

/**
 * This replica's memory of what each gateway exposes. An entry is used only while the catalog generation it was
 * loaded under is current (runtime catalog-generation.ts: followed in memory while its subscription is live, else
 * read from the cache), so a change the catalog makes (a capability hidden, a server disabled) takes effect at the
 * next request on every replica, a lost announcement included. An announcement naming gateways drops just those;
 * an entry is used for at most `ttlMs` after it was loaded and dropped by the sweep after that, so a replica keeps
 * only the gateways it served lately (each holds its servers' unsealed headers and capability lists). When the generation cannot be learnt (the cache unreachable and
 * the subscription down) every request asks the catalog. Concurrent misses under one generation, with no announcement
 * in between, share one catalog call (so do the re-checks of a gateway's open GET streams after a change). Listeners
 * hear which gateways an announcement names (the data plane re-checks and tells connected clients), and hear "every
 * gateway" when the subscription is trusted again after an interruption or a stall, when some may have been lost.
 */
export class GatewayExposures {
  private readonly entries = new Map<string, Entry>();
  /**
   * Loads in flight, by slug, each with the generation and epoch it runs under: a request of a later generation, or
   * after an announcement (a scoped one leaves the generation), does not join it, since it may have read the old state.
   */
  private readonly loading = new Map<string, { generation: string; epoch: number; value: Promise<ResolvedGateway> }>();
  private readonly listeners = new Set<(gatewayIds: string[]) => void>();
  private readonly generation: GenerationView;
  private readonly stopHearing: () => void;
  /** Bumped by every announcement, so a load that raced a change is not kept. */
  private epoch = 0;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly clients: ServiceClients,
    private readonly logger: Logger,
    cache: Cache,
    private readonly ttlMs = 30_000,
  ) {
    this.generation = catalogGenerationOf(cache);
    const stops = [
      this.generation.onAnnouncement((message) => this.forget(gatewaysNamedIn(message))),
      // Announcements may have been lost meanwhile: connected clients are told that any list may have changed.
      this.generation.onResumed(() => this.forget([])),
    ];
    this.stopHearing = () => stops.forEach((stop) => stop());
    this.sweeper = setInterval(() => this.dropExpired(), ttlMs);
    this.sweeper.unref();
  }

  close(): void {
    clearInterval(this.sweeper);
    this.stopHearing();
  }

  /** How many gateways this replica remembers. */
  get size(): number {
    return this.entries.size;
  }

  private dropExpired(): void {
    const now = Date.now();
    for (const [slug, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(slug);
  }

  onChange(listener: (gatewayIds: string[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Drops what the named gateways (none: every gateway) expose here and tells the listeners. */
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

  /** What the gateway `slug` exposes, for a request read at `readAt` (its `pollPhaseMark()`). */
  async get(slug: string, readAt?: number): Promise<ResolvedGateway> {
    let generation: string;
    try {
      generation = await this.generation.current(readAt);
    } catch {
      // Nobody can say whether the catalog changed: ask it, and remember nothing.
      return this.load(slug, null);
    }
    const entry = this.entries.get(slug);
    if (entry && entry.generation === generation && entry.expiresAt > Date.now()) return entry.value;
    const pending = this.loading.get(slug);
    if (pending?.generation === generation && pending.epoch === this.epoch) return pending.value;
    const epoch = this.epoch;
    const value = this.load(slug, generation).finally(() => {
      if (this.loading.get(slug)?.value === value) this.loading.delete(slug);
    });
    this.loading.set(slug, { generation, epoch, value });
    return value;
  }

  private async load(slug: string, generation: string | null): Promise<ResolvedGateway> {
    const epoch = this.epoch;
    const runtime = await this.clients.catalog.resolveGateway({ slug });
    const team = await this.clients.identity.getTeam({ teamRef: runtime.gateway!.teamId });
    const value: ResolvedGateway = { exposure: buildExposure(runtime), teamSlug: team.slug };
    if (generation !== null && epoch === this.epoch) this.entries.set(slug, { value, generation, expiresAt: Date.now() + this.ttlMs });
    return value;
  }
}
