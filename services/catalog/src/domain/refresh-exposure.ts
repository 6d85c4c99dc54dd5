import { catalogChangeCommitted } from '@platform/runtime';
import type { CatalogDeps } from '../deps';
import type { CapabilityRow } from '../store/capabilities-store';
import { listGatewaysNamingServer } from '../store/gateway-servers-store';
import type { DiscoveredCapability } from './discovery';

/**
 * Gateways a refresh's announcement names at most; a server in more is announced to every gateway. Each id costs
 * the message 37 bytes and every edge a look through what it remembers, and a change to a server in that many
 * gateways concerns most of an edge's memory anyway.
 */
export const MAX_NAMED_GATEWAYS = 100;

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
 * After a committed refresh that changed what the server exposes: tells the edges to drop the gateways that name
 * it, and nothing when none does (a server in no gateway is served nowhere). Read after the commit, so a gateway
 * that named the server before an edge could load it with the old capabilities is among them (a gateway changed
 * later announces itself). Past MAX_NAMED_GATEWAYS, every gateway.
 */
export async function announceServerExposureChange(deps: CatalogDeps, serverId: string): Promise<void> {
  /** The gateways to name; null: every gateway. */
  let named: string[] | null;
  try {
    const gatewayIds = await listGatewaysNamingServer(deps.db, serverId, MAX_NAMED_GATEWAYS + 1);
    if (gatewayIds.length === 0) return;
    named = gatewayIds.length > MAX_NAMED_GATEWAYS ? null : gatewayIds;
  } catch (error) {
    // The change is committed: not knowing which gateways it concerns, tell them all rather than fail the answer.
    deps.logger.warn({ err: error, serverId }, 'reading the gateways of a refreshed MCP server failed; announcing every gateway');
    named = null;
  }
  await catalogChangeCommitted(deps, named ?? []);
}
