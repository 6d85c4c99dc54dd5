import { z } from 'zod';
import type { McpServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import type { Team } from '@platform/proto/gen/platform/identity/v1/identity';
import { PUBLISH_POLICIES } from '@platform/runtime';
import { orNull, timestamp, toNumber, uuid } from './common';
import { authModeOf, authModeSchema, serverOauthSchema, serverRequirementSchema } from './mcp-server-auth';
import { presentServerHealth, serverHealthSchema } from './server-health';

const PUBLISH_STATES = ['draft', 'pending', 'published', 'rejected'] as const;

/** Both server views (§2.3, §2.4) show it: what publishing and op 2 take back (docs/catalog.md, Publishing and approvals). */
export const capabilitiesFingerprintSchema = z.string().meta({
  description:
    'A digest of the present capabilities (each one\'s kind, name and `fingerprint`): it changes when discovery stores a ' +
    'new, redefined or gone capability, and only then. Send it back as `capabilitiesFingerprint` when publishing or ' +
    'approving a review, to approve exactly the capabilities read.',
});

/**
 * A team's MCP server (spec §2.3; OAuth modes come later, so `authMode` is `none` or `static` and `oauth` and
 * `requirement` are null, present so that clients of the spec find them). The credential is write-only: `hasAuth` and
 * `authValueHint` are all that shows of it. `hasAuth` counts a platform admin's headers too (op 16), which the team
 * cannot see or remove: a server that sends a secret never reads as sending none.
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
    authHeaderName: z.string().nullable().meta({ description: 'The header that carries the team\'s credential (`authValue`); null without one.' }),
    hasAuth: z.boolean().meta({
      description: 'Whether any secret is sent upstream: the team\'s credential, or headers a platform admin set (never shown). ' +
        'Removing the credential does not remove those headers.',
    }),
    authValueHint: z.string().nullable().meta({ description: 'The last 4 characters of the team\'s credential when it has 12 or more; else null.' }),
    authMode: authModeSchema,
    oauth: serverOauthSchema,
    requirement: serverRequirementSchema,
    timeoutSeconds: z.number().int(),
    enabled: z.boolean(),
    publishState: z.enum(PUBLISH_STATES).meta({ description: '`draft`; `pending` (awaiting a platform admin\'s review); `published` (in the catalog); `rejected`.' }),
    effectivePublishPolicy: z.enum(PUBLISH_POLICIES).meta({ description: 'The team\'s override, else the platform default (MCP_PUBLISH_POLICY).' }),
    publishRequestedAt: timestamp.nullable(),
    publishRequestNote: z.string().nullable(),
    publishReviewedAt: timestamp.nullable(),
    publishReviewedByName: z.string().nullable(),
    publishReviewNote: z.string().nullable(),
    counts: z
      .object({ tools: z.number().int(), resources: z.number().int(), resourceTemplates: z.number().int(), prompts: z.number().int() })
      .meta({ description: 'Present capabilities (not gone) by kind.' }),
    pendingChanges: z.number().int().meta({ description: 'Present capabilities not approved as they are now: new ones and changed ones.' }),
    capabilitiesFingerprint: capabilitiesFingerprintSchema,
    refreshedAt: timestamp.nullable().meta({ description: 'The last successful discovery.' }),
    lastRefreshError: z.string().nullable().meta({ description: 'Why the last discovery failed; null once one succeeds.' }),
    sendIdentity: z.boolean(),
    capturePayloads: z.boolean(),
    health: serverHealthSchema,
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
    authMode: authModeOf(server.hasAuth),
    oauth: null,
    requirement: null,
    timeoutSeconds: server.timeoutSeconds,
    enabled: server.enabled,
    publishState: PUBLISH_STATES.find((state) => state === server.publishState) ?? 'draft',
    effectivePublishPolicy: server.effectivePublishPolicy === 'self_publish' ? 'self_publish' : 'approval_required',
    publishRequestedAt: orNull(server.publishRequestedAt),
    publishRequestNote: orNull(server.publishRequestNote),
    publishReviewedAt: orNull(server.publishReviewedAt),
    publishReviewedByName: orNull(server.publishReviewedByName),
    publishReviewNote: orNull(server.publishReviewNote),
    counts: {
      tools: server.counts?.tools ?? 0,
      resources: server.counts?.resources ?? 0,
      resourceTemplates: server.counts?.resourceTemplates ?? 0,
      prompts: server.counts?.prompts ?? 0,
    },
    pendingChanges: server.pendingChanges,
    capabilitiesFingerprint: server.capabilitiesFingerprint,
    refreshedAt: orNull(server.refreshedAt),
    lastRefreshError: orNull(server.lastRefreshError),
    sendIdentity: server.sendIdentity,
    capturePayloads: server.capturePayloads,
    health: presentServerHealth(server.health),
    revision: toNumber(server.revision),
    createdAt: server.createdAt ?? '',
    updatedAt: server.updatedAt ?? '',
  };
}
