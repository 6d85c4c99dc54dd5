import { z } from 'zod';
import type { McpServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import type { Team } from '@platform/proto/gen/platform/identity/v1/identity';
import { orNull, timestamp, toNumber, uuid } from './common';
import { capabilitiesFingerprintSchema } from './mcp-server';
import { teamRefSchema } from './team';

const visibleTeamSchema = z.object({ id: uuid, slug: z.string(), name: z.string() }).meta({ id: 'AdminMcpServerTeam' });
const toolSchema = z.object({ name: z.string(), title: z.string(), description: z.string() }).meta({ id: 'AdminMcpServerTool' });

/**
 * An MCP server in the platform admin view (spec §2.4): any team's server, with how it is offered. Header values
 * are write-only: `hasHeaders` is all that shows of them.
 */
export const adminMcpServerSchema = z
  .object({
    id: uuid,
    name: z.string(),
    slug: z.string(),
    description: z.string(),
    url: z.string(),
    accessMode: z.enum(['proxy', 'direct']).meta({ description: "`direct`: agents get the server's address and headers; a team's own server is always `proxy`." }),
    enabled: z.boolean(),
    visibility: z.enum(['all', 'teams']).meta({ description: 'A platform server is offered to all teams (personal workspaces only when `personal`), or to `teams`. A team\'s own server reads `teams` (itself).' }),
    personal: z.boolean().meta({ description: 'Offered in every personal workspace (whatever `visibility`, which governs the other teams).' }),
    teams: z.array(visibleTeamSchema).meta({ description: 'The teams the server is offered to by name (a team\'s own server: that team).' }),
    hasHeaders: z.boolean(),
    tools: z.array(toolSchema).meta({
      description:
        'The present tools from the last discovery, by name: the first 100 (fewer when their texts pass 192 KiB), descriptions cut to 1,000 characters, names and titles to 200. The full list is the server\'s capabilities.',
    }),
    toolsRefreshedAt: timestamp.nullable().meta({ description: 'When discovery last succeeded.' }),
    toolsError: z.string().nullable().meta({ description: 'Why the last discovery failed, until one succeeds.' }),
    capabilitiesFingerprint: capabilitiesFingerprintSchema,
    team: teamRefSchema,
    revision: z.number().int(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'AdminMcpServer' });

export type AdminMcpServerJson = z.infer<typeof adminMcpServerSchema>;

/** `teams` holds (at least) the owning team and the teams the server is offered to; unknown ones are left out. */
export function presentAdminMcpServer(server: McpServer, teams: ReadonlyMap<string, Team>): AdminMcpServerJson {
  const owner = teams.get(server.teamId);
  return {
    id: server.id,
    name: server.name,
    slug: server.slug,
    description: server.description,
    url: server.url,
    accessMode: server.accessMode === 'direct' ? 'direct' : 'proxy',
    enabled: server.enabled,
    visibility: server.visibility === 'all' ? 'all' : 'teams',
    personal: server.personal,
    teams: server.visibleTeamIds.flatMap((id) => {
      const team = teams.get(id);
      return team ? [{ id: team.id, slug: team.slug, name: team.name }] : [];
    }),
    hasHeaders: server.hasHeaders,
    tools: server.tools.map(({ name, title, description }) => ({ name, title, description })),
    toolsRefreshedAt: orNull(server.refreshedAt),
    toolsError: orNull(server.lastRefreshError),
    capabilitiesFingerprint: server.capabilitiesFingerprint,
    team: { id: server.teamId, slug: owner?.slug ?? '', name: owner?.name ?? '', kind: owner?.kind ?? '' },
    revision: toNumber(server.revision),
    createdAt: server.createdAt ?? '',
    updatedAt: server.updatedAt ?? '',
  };
}

/** The ids of every team a page of servers names: owners and the teams they are offered to. */
export function teamIdsOf(servers: readonly McpServer[]): string[] {
  return servers.flatMap((server) => [server.teamId, ...server.visibleTeamIds]);
}
