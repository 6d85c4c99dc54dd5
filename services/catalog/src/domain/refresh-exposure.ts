import { catalogChangeCommitted, MAX_GATEWAYS_PER_MESSAGE } from '@platform/runtime';
import type { CatalogDeps } from '../deps';
import type { CapabilityRow } from '../store/capabilities-store';
import { listGatewaysNamingServer } from '../store/gateway-servers-store';
import type { DiscoveredCapability } from './discovery';

/** Gateway ids read per query, each page announced as one message (runtime catalog-generation.ts). */
const GATEWAYS_PER_PAGE = MAX_GATEWAYS_PER_MESSAGE;

/** Exposed (docs/catalog.md, ResolveGateway): present, and approved as it is now. Only then can a gateway serve it. */
const exposedAs = (row: Pick<CapabilityRow, 'approved_fingerprint'>, fingerprint: string) => row.approved_fingerprint === fingerprint;

/**
 * Whether a refresh can change what gateways expose of the server (docs/catalog.md, Refresh changes): an exposed
 * capability was redefined (now hidden) or went, or a capability is now exposed that was not (it came back, or was
 * redefined back, as it was approved). A new capability is stored unapproved and a change to an unapproved one keeps
 * it hidden, so neither changes any gateway. `before` must hold the approvals as they stay until the refresh commits
 * (capabilities-store.ts, lockPresentCapabilities); the fingerprint covers the whole exposed definition.
 */
export function refreshChangesExposure(found: readonly DiscoveredCapability[], before: readonly CapabilityRow[], goneIds: readonly string[]): boolean {
  const previous = new Map(before.map((row) => [`${row.kind}\u0000${row.name}`, row]));
  const switched = found.some((item) => {
    const old = previous.get(`${item.kind}\u0000${item.name}`);
    if (!old) return false;
    const wasExposed = old.gone_at === null && exposedAs(old, old.fingerprint);
    // Exposed before and after means approved as both, so the same definition: only a change of state counts.
    return wasExposed !== exposedAs(old, item.fingerprint);
  });
  if (switched) return true;
  const gone = new Set(goneIds);
  return before.some((row) => gone.has(row.id) && exposedAs(row, row.fingerprint));
}

/**
 * After a committed change to what the server exposes (a refresh, publishing or its review, an approval, a change
 * of the server by its team or by op 16): tells the edges to drop the gateways that name it, and nothing when none does (a server in no gateway is served nowhere). Read after the commit, so a gateway
 * that named the server before an edge could load it with the old capabilities is among them (a gateway changed
 * later announces itself). However many they are, each is named, a page at a time: never "every gateway" because
 * they are many, since one team's gateways (a team may have any number) would then make every edge reload every
 * gateway and every open GET stream on the platform re-list. Every gateway only when they cannot be read.
 */
export async function announceServerExposureChange(deps: CatalogDeps, serverId: string): Promise<void> {
  try {
    for (let after: string | null = null; ; ) {
      const page = await listGatewaysNamingServer(deps.db, serverId, after, GATEWAYS_PER_PAGE);
      // Announced as read (never failing: catalogChangeCommitted logs), so memory and each message stay one page.
      if (page.length > 0) await catalogChangeCommitted(deps, page);
      if (page.length < GATEWAYS_PER_PAGE) return;
      after = page[page.length - 1]!;
    }
  } catch (error) {
    // The change is committed: not knowing which gateways it concerns, tell them all rather than fail the answer.
    deps.logger.warn({ err: error, serverId }, 'reading the gateways of a changed MCP server failed; announcing every gateway');
    await catalogChangeCommitted(deps);
  }
}
