import { z } from 'zod';
import { SLUG_PATTERN } from '../slug';
import type { Gateway } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { timestamp, toNumber, uuid } from './common';

/** A gateway slug: 1 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit. */

/** A gateway: a team's MCP endpoint, served at `url`. */
export const gatewaySchema = z
  .object({
    id: uuid,
    teamId: uuid,
    slug: z.string().meta({ pattern: SLUG_PATTERN.source, description: 'Unique across the installation.' }),
    name: z.string(),
    enabled: z.boolean().meta({ description: 'When false, no one can authorize for or use the gateway.' }),
    url: z.string().meta({ description: 'The MCP endpoint: `{APP_URL}/mcp/{slug}`; also the OAuth resource identifier.' }),
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
    revision: toNumber(gateway.revision),
    createdAt: gateway.createdAt ?? '',
    updatedAt: gateway.updatedAt ?? '',
  };
}
