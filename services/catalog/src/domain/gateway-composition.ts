import { AppError, type FieldError, type Queryable } from '@platform/runtime';
import type { GatewayServerEntry } from '../store/gateways-store';
import { findOfferedServers, holdServersAgainstDeletion, listPresentCapabilityNames, type CapabilityNameRow } from '../store/gateway-servers-store';
import type { TeamAudience } from '../store/visibility';
import { assignExposedNames } from './gateway-names';
import type { ServerChoice } from './gateway-rules';

const collision = (message: string) => new AppError('name_collision', message);

/**
 * Turns a gateway change's server choices into the stored list, or refuses it:
 * - every server must be offered to the gateway's team; an unknown server and another team's answer alike (400),
 *   so the answer reveals nothing about other teams' servers;
 * - an absent prefix is the server's slug; non-empty prefixes are distinct (409 `name_collision`);
 * - the exposed names of the servers' present capabilities must not collide within a kind (409 `name_collision`,
 *   naming them). Unapproved capabilities count too: approving one later must not break the gateway.
 * Run inside the change's transaction.
 */
export async function composeGatewayServers(db: Queryable, audience: TeamAudience, choices: readonly ServerChoice[]): Promise<GatewayServerEntry[]> {
  // Held before they are read (a statement of its own, so the read sees a deletion that was waited for as done):
  // a server deleted meanwhile is then simply not offered (400), never a failed insert. Only the held ones are
  // read: one offered only after the hold would go unheld, so it is not offered yet.
  const held = await holdServersAgainstDeletion(db, choices.map((c) => c.serverId), audience);
  const offered = new Map((await findOfferedServers(db, held, audience)).map((row) => [row.id, row]));
  const missing: FieldError[] = choices.flatMap((choice, index) =>
    offered.has(choice.serverId) ? [] : [{ field: `servers.${index}.serverId`, problem: 'is not an MCP server offered to this team' }],
  );
  if (missing.length > 0) throw AppError.invalid(`Unknown MCP servers: ${missing.map((m) => m.field).join(', ')}`, missing);

  const entries = choices.map((choice) => ({ serverId: choice.serverId, prefix: choice.prefix ?? offered.get(choice.serverId)!.slug }));
  const prefixes = new Set<string>();
  for (const entry of entries) {
    if (entry.prefix !== '' && prefixes.has(entry.prefix)) throw collision(`Two servers of the gateway would use the prefix '${entry.prefix}'`);
    prefixes.add(entry.prefix);
  }

  const byServer = new Map<string, CapabilityNameRow[]>();
  for (const row of await listPresentCapabilityNames(db, entries.map((e) => e.serverId))) {
    byServer.set(row.server_id, [...(byServer.get(row.server_id) ?? []), row]);
  }
  const { collisions } = assignExposedNames(entries, (entry) => byServer.get(entry.serverId) ?? []);
  if (collisions.length > 0) {
    const shown = collisions.slice(0, 10).join(', ');
    throw collision(`These names would be exposed by more than one server: ${shown}${collisions.length > 10 ? ` and ${collisions.length - 10} more` : ''}`);
  }
  return entries;
}
