import type { Logger } from '../logging/logger';
import type { Cache } from './port';
import { SharedGeneration, type GenerationView } from './shared-generation';

/**
 * The catalog generation: changes whenever what some gateways expose may have changed (a server published,
 * rejected, changed or deleted; a capability approved or rediscovered; a gateway's servers changed). Edges keep each
 * gateway's resolved configuration in memory (gateway/src/mcp/exposures.ts) and use it only while the generation
 * they loaded it under is current, so a change (a capability hidden after a rug pull) takes effect at the next
 * request on every replica. How it is kept and followed: shared-generation.ts.
 *
 * An announcement names the gateways (ids, comma-separated, at most MAX_GATEWAYS_PER_MESSAGE a message) when the
 * change is known to touch only those: edges then forget just those and the generation stays. An empty one means any
 * gateway and moves the generation.
 */
export const catalogGeneration = new SharedGeneration('catalog', { scoped: (message) => message !== '' });

/**
 * Gateway ids one message names at most. Each id costs the message 37 bytes and every edge a look through what it
 * remembers, so a longer list goes out in several messages (after one store of the new value: one change). Never
 * "every gateway" because a list is long: that would make every edge reload every gateway and every open GET stream
 * on the platform re-list, for one team's gateways (docs/catalog.md, Refresh changes).
 */
export const MAX_GATEWAYS_PER_MESSAGE = 100;

/** The messages announcing a change to the gateways: '' (every gateway) when none is named. */
function messagesNaming(gatewayIds: readonly string[]): string[] {
  if (gatewayIds.length === 0) return [''];
  const messages: string[] = [];
  for (let start = 0; start < gatewayIds.length; start += MAX_GATEWAYS_PER_MESSAGE) {
    messages.push(gatewayIds.slice(start, start + MAX_GATEWAYS_PER_MESSAGE).join(','));
  }
  return messages;
}

/** Moves the catalog generation and tells every edge which gateways changed (none named: any of them). */
export function announceCatalogChange(cache: Cache, gatewayIds: readonly string[] = []): Promise<void> {
  return catalogGeneration.bump(cache, messagesNaming(gatewayIds));
}

/** After a committed catalog change: `announceCatalogChange`, never failing the answer (SharedGeneration.moveAfterCommit). */
export function catalogChangeCommitted(deps: { cache: Cache; logger: Logger }, gatewayIds: readonly string[] = []): Promise<void> {
  return catalogGeneration.moveAfterCommit(deps, messagesNaming(gatewayIds));
}

/** The gateway ids an announcement names; an empty list means every gateway. */
export function gatewaysNamedIn(message: string): string[] {
  return message === '' ? [] : message.split(',');
}

/** This process's view of the catalog generation (one per cache instance). */
export function catalogGenerationOf(cache: Cache): GenerationView {
  return catalogGeneration.viewOf(cache);
}

/** Calls `onChange` with the gateway ids each announcement names (empty: every gateway). Returns the unsubscriber. */
export function onCatalogChange(cache: Cache, onChange: (gatewayIds: string[]) => void): Promise<() => Promise<void>> {
  return cache.subscribe(catalogGeneration.channel, (message) => onChange(gatewaysNamedIn(message)));
}
