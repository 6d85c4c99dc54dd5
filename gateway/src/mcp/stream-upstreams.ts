import type { RuntimeServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import type { ResolvedGateway } from './exposures';

/**
 * Whether a client GET stream whose relays were started over `opened` must end now that the gateway resolves to
 * `current`: the gateway is disabled or is another one now, a relayed server left (disabled, rejected, unpublished,
 * no longer offered, removed from the gateway, deleted) or came, or the upstream exchange a relay makes changed
 * (where and how it connects, with which credential or identity token). A change of capabilities, names or payload
 * capture alone leaves the relays as they are (the client is told its lists changed instead).
 */
export function streamUpstreamsChanged(opened: ResolvedGateway, current: ResolvedGateway): boolean {
  const before = opened.exposure.runtime;
  const now = current.exposure.runtime;
  // The gateway and team an identity token names.
  if (!now.gateway?.enabled || now.gateway.id !== before.gateway?.id || now.gateway.slug !== before.gateway.slug) return true;
  if (now.gateway.teamId !== before.gateway.teamId || current.teamSlug !== opened.teamSlug) return true;
  // Server ids are unique in a gateway: the same count with every relayed one still there is the same set.
  if (now.servers.length !== before.servers.length) return true;
  return before.servers.some((server) => {
    const still = current.exposure.servers.get(server.id);
    return !still || !sameUpstreamExchange(server, still);
  });
}

/** Whether a relay built for `a` talks to the upstream exactly as one built for `b` would. */
function sameUpstreamExchange(a: RuntimeServer, b: RuntimeServer): boolean {
  return a.url === b.url && a.transport === b.transport && a.timeoutSeconds === b.timeoutSeconds && a.sendIdentity === b.sendIdentity && sameHeaders(a.headers, b.headers);
}

function sameHeaders(a: Record<string, string>, b: Record<string, string>): boolean {
  const names = Object.keys(a);
  return names.length === Object.keys(b).length && names.every((name) => Object.hasOwn(b, name) && a[name] === b[name]);
}
