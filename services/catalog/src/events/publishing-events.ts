import { TOPICS, writeEvent, type Transaction } from '@platform/runtime';
import { SCHEMA } from '../deps';
import type { McpServerRow } from '../store/mcp-servers-mappers';

/**
 * Publication events on `catalog.v1`, written in the transaction of the change: `mcp_server.publish_requested`
 * (the platform admins' attention list), `mcp_server.published` and `mcp_server.rejected` (the owning team's
 * notifications). Keyed by server, so one server's events arrive in order.
 */
export type PublicationEvent = 'mcp_server.publish_requested' | 'mcp_server.published' | 'mcp_server.rejected';

export async function writePublicationEvent(tx: Transaction, type: PublicationEvent, server: McpServerRow, details: Record<string, unknown>): Promise<void> {
  await writeEvent(tx, SCHEMA, {
    topic: TOPICS.catalog,
    type,
    key: server.id,
    data: { serverId: server.id, teamId: server.team_id, serverSlug: server.slug, serverName: server.name, ...details },
    source: SCHEMA,
  });
}
