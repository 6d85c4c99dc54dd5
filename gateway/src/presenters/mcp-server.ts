import { z } from 'zod';
import type { McpServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import type { Team } from '@platform/proto/gen/platform/identity/v1/identity';
import { orNull, timestamp, toNumber, uuid } from './common';

/**
 * A team's MCP server (spec §2.3, the fields of this slice; publishing, counts, health, refresh and OAuth modes come
 * later). The credential is write-only: `hasAuth` and `authValueHint` are all that shows of it.
 */
export const mcpServerSchema = z
  .object({
    id: uuid,
    teamId: uuid,
    teamSlug: z.string(),
    teamName: z.string(),
    slug: z.string().meta({ description: 'Unique within the team.' }),
    name: z.string(),
    description: z.string(),
    url: z.string(),
    transport: z.enum(['streamable-http', 'sse']),
    authHeaderName: z.string().nullable().meta({ description: 'The header that carries the credential; null without one.' }),
    hasAuth: z.boolean(),
    authValueHint: z.string().nullable().meta({ description: 'The last 4 characters of a credential of 12 or more; else null.' }),
    timeoutSeconds: z.number().int(),
    enabled: z.boolean(),
    publishState: z.string().meta({ description: '`draft` until the server is published.' }),
    sendIdentity: z.boolean(),
    capturePayloads: z.boolean(),
    revision: z.number().int(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'McpServer' });

export type McpServerJson = z.infer<typeof mcpServerSchema>;

export function presentMcpServer(server: McpServer, team: Team): McpServerJson {
  return {
    id: server.id,
    teamId: server.teamId,
    teamSlug: team.slug,
    teamName: team.name,
    slug: server.slug,
    name: server.name,
    description: server.description,
    url: server.url,
    transport: server.transport === 'sse' ? 'sse' : 'streamable-http',
    authHeaderName: orNull(server.authHeaderName),
    hasAuth: server.hasAuth,
    authValueHint: orNull(server.authValueHint),
    timeoutSeconds: server.timeoutSeconds,
    enabled: server.enabled,
    publishState: server.publishState,
    sendIdentity: server.sendIdentity,
    capturePayloads: server.capturePayloads,
    revision: toNumber(server.revision),
    createdAt: server.createdAt ?? '',
    updatedAt: server.updatedAt ?? '',
  };
}
