import { z } from 'zod';
import type { ServerHealth } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { orNull, timestamp } from './common';

/** The latest periodic health check of an MCP server (spec §2.3 `health`; docs/catalog.md). */
export const serverHealthSchema = z
  .object({
    status: z.enum(['unknown', 'healthy', 'unhealthy']).meta({ description: '`unknown` until the first check.' }),
    checkedAt: timestamp.nullable(),
    statusSince: timestamp.nullable().meta({ description: 'When the status last changed.' }),
    latencyMs: z.number().int().nullable().meta({ description: "The ping's round trip; null unless healthy." }),
    errorClass: z
      .string()
      .nullable()
      .meta({ description: 'Why the check failed: `timeout`, `connection_refused`, `http_error`, `protocol_error`, `address_not_allowed` or `unreachable`.' }),
    message: z.string().nullable().meta({ description: "The platform's short description of the failure (never the upstream's text)." }),
    signInRequired: z.boolean().meta({ description: 'The upstream answered 401 or 403 to the stored credentials.' }),
  })
  .meta({ id: 'McpServerHealth' });

export type ServerHealthJson = z.infer<typeof serverHealthSchema>;

export function presentServerHealth(health: ServerHealth | undefined): ServerHealthJson {
  const status = health?.status === 'healthy' || health?.status === 'unhealthy' ? health.status : 'unknown';
  return {
    status,
    checkedAt: orNull(health?.checkedAt),
    statusSince: orNull(health?.statusSince),
    latencyMs: status === 'healthy' ? (health?.latencyMs ?? 0) : null,
    errorClass: orNull(health?.errorClass),
    message: orNull(health?.message),
    signInRequired: health?.signInRequired ?? false,
  };
}
