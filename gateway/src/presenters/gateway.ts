import { z } from 'zod';
import { SLUG_PATTERN } from '../slug';
import type { Gateway } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { timestamp, toNumber, uuid } from './common';

/** One server of a gateway, in gateway order. */
const gatewayServerSchema = z
  .object({
    serverId: uuid,
    slug: z.string().meta({ description: 'The server\'s slug (unique within its team).' }),
    name: z.string(),
    prefix: z.string().meta({ description: 'Exposed tool and prompt names are `{prefix}__{name}`; the bare name when empty.' }),
  })
  .meta({ id: 'GatewayServer' });

/** A gateway: a team's MCP endpoint, served at `url`. */
export const gatewaySchema = z
  .object({
    id: uuid,
    teamId: uuid,
    slug: z.string().meta({ pattern: SLUG_PATTERN.source, description: 'Unique across the installation.' }),
    name: z.string(),
    enabled: z.boolean().meta({ description: 'When false, no one can authorize for or use the gateway.' }),
    url: z.string().meta({ description: 'The MCP endpoint: `{APP_URL}/mcp/{slug}`; also the OAuth resource identifier.' }),
    servers: z.array(gatewayServerSchema).meta({ description: 'The servers the gateway fronts, in order (the earlier wins a run-time name collision).' }),
    revision: z.number().int(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Gateway' });

export type GatewayJson = z.infer<typeof gatewaySchema>;

/** `appUrl` is the installation's public address without a trailing slash. */
export function presentGateway(gateway: Gateway, appUrl: string): GatewayJson {
  return {
    id: gateway.id,
    teamId: gateway.teamId,
    slug: gateway.slug,
    name: gateway.name,
    enabled: gateway.enabled,
    url: `${appUrl}/mcp/${gateway.slug}`,
    servers: gateway.servers.map((server) => ({ serverId: server.serverId, slug: server.serverSlug, name: server.serverName, prefix: server.prefix })),
    revision: toNumber(gateway.revision),
    createdAt: gateway.createdAt ?? '',
    updatedAt: gateway.updatedAt ?? '',
  };
}
