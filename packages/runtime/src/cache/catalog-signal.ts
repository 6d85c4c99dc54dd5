import type { Cache } from './port';

/**
 * Tells every edge that what some gateways expose may have changed (a server published, rejected, changed or
 * deleted; a capability approved or rediscovered; a gateway's servers changed). Edges keep each gateway's
 * resolved configuration in memory and drop it on this signal; a short TTL bounds the damage of a lost signal.
 * The message names the gateways (ids) when the change is known to touch only those, or is empty for "any".
 */
export const CATALOG_CHANGED_CHANNEL = 'catalog:changed';

export function announceCatalogChange(cache: Cache, gatewayIds: readonly string[] = []): Promise<void> {
  return cache.publish(CATALOG_CHANGED_CHANNEL, gatewayIds.join(','));
}

/** Calls `onChange` with the named gateway ids, or an empty list meaning every gateway. Returns the unsubscriber. */
export function onCatalogChange(cache: Cache, onChange: (gatewayIds: string[]) => void): Promise<() => Promise<void>> {
  return cache.subscribe(CATALOG_CHANGED_CHANNEL, (message) => onChange(message === '' ? [] : message.split(',')));
}
