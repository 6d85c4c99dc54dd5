import { z } from 'zod';
import type { ApiKey } from '@platform/proto/gen/platform/identity/v1/identity';
import { ApiKeyKind, TeamRole } from '@platform/proto/gen/platform/identity/v1/identity';
import { AppError } from '@platform/runtime';
import { callerOf, requestContextOf, teamOf, type Caller } from '../auth/caller';
import { teamRoleFromName } from '../auth/roles';
import type { EdgeDeps } from '../edge-deps';
import { pageQuery, pageResponse } from '../pagination';
import { API_KEY_SCOPES, apiKeySchema, createdApiKeySchema, presentApiKey } from '../presenters/api-key';
import { uuid } from '../presenters/common';
import { defineRoute, type AnyRouteDefinition } from '../route';
import { teamParam } from '../team-ref';
import { timestampSchema } from '../validation/text';

const TEAM_MEMBERS = ['owner', 'admin', 'editor', 'member'] as const;
const PLATFORM_STAFF = ['admin', 'auditor', 'staff'] as const;

/** The fields every new key takes (team keys add `kind`; a service account's keys are always service keys). */
export const newKeyFields = {
  name: z.string().trim().min(1).max(100),
  scopes: z
    .array(z.enum(API_KEY_SCOPES))
    .min(1)
    .meta({ description: 'At least one, no repeats. A personal key may carry only what its person\'s role allows: member query; editor query, ingest; admin and owner all.' }),
  // Years 0001 to 9999 in UTC (timestampSchema): an instant past 9999 in UTC would fail the insert as a 500.
  expiresAt: timestampSchema()
    .optional()
    .meta({ description: 'Must be in the future (and at most 9999-12-31T23:59:59Z); without it the key does not expire.' }),
  knowledgeBaseIds: z.array(uuid).max(100).optional().meta({ description: 'Restrict the key to these knowledge bases.' }),
  agentIds: z.array(uuid).max(100).optional().meta({ description: 'Restrict the key to these agents.' }),
};

/** The full key may be shown once: it must not linger in any cache. */
export const NO_STORE = { 'Cache-Control': 'no-store' };

type Access = 'read' | 'revoke';

/** Owners and admins see and revoke every key of the team; platform staff read them all; others only their own personal keys. */
function reachesAllKeys(caller: Caller, access: Access): boolean {
  const role = caller.team?.role;
  if (role === 'owner' || role === 'admin') return true;
  return access === 'read' && caller.platformRole !== null;
}

function reaches(caller: Caller, key: ApiKey, access: Access): boolean {
  return reachesAllKeys(caller, access) || (key.kind === ApiKeyKind.API_KEY_KIND_PERSONAL && key.personId === caller.personId);
}

const keyParams = z.object({ team: teamParam, keyId: z.string().regex(/^[a-z2-7]{16}$/).meta({ description: 'The key\'s public id.' }) });

export function apiKeyRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  // Read at request time: the route catalogue builds routes without clients.
  const identity = () => deps.clients.identity;

  /** A key the caller may see, else 404 (whether it exists is not revealed). */
  async function reachableKey(ctx: { auth: unknown; params: { keyId: string } }, access: Access): Promise<ApiKey> {
    const key = await identity().getApiKey({ teamId: teamOf(ctx).id, apiKeyId: ctx.params.keyId });
    if (!reaches(callerOf(ctx), key, access)) throw AppError.notFound('API key');
    return key;
  }

  return [
    defineRoute({
      method: 'post',
      path: '/v1/teams/{team}/api-keys',
      operationId: 'createApiKey',
      summary: 'Create an API key',
      description:
        'Personal keys act as the caller within the team, with scopes bounded by their role; service keys act as the team and are ' +
        'created by owners and admins. The response carries the full key `rag_<id>_<secret>` once; it is never shown again.',
      tags: ['api-keys'],
      auth: { callers: 'team members (personal keys); team owners and admins (service keys); browser session only', team: TEAM_MEMBERS },
      request: {
        params: z.object({ team: teamParam }),
        body: z.object({ ...newKeyFields, kind: z.enum(['personal', 'service']) }),
      },
      responses: {
        201: { description: 'The new key, with the full key in `key` (this once)', schema: createdApiKeySchema },
        400: { description: 'Invalid fields, or scopes beyond what the caller\'s role allows for a personal key' },
        403: { description: 'A service key asked for by someone who is not an owner or admin' },
      },
      handler: async (ctx) => {
        const caller = callerOf(ctx);
        const role = caller.team?.role ?? null;
        if (ctx.body.kind === 'service' && role !== 'owner' && role !== 'admin') {
          throw AppError.forbidden('Only team owners and admins can create service keys');
        }
        const created = await identity().createApiKey({
          context: requestContextOf(ctx),
          teamId: teamOf(ctx).id,
          name: ctx.body.name,
          kind: ctx.body.kind === 'personal' ? ApiKeyKind.API_KEY_KIND_PERSONAL : ApiKeyKind.API_KEY_KIND_SERVICE,
          scopes: ctx.body.scopes,
          ...(ctx.body.expiresAt ? { expiresAt: ctx.body.expiresAt } : {}),
          knowledgeBaseIds: ctx.body.knowledgeBaseIds ?? [],
          agentIds: ctx.body.agentIds ?? [],
          serviceAccountId: '',
          callerRole: role ? teamRoleFromName(role) : TeamRole.TEAM_ROLE_UNSPECIFIED,
        });
        return { status: 201, data: { ...presentApiKey(created.apiKey!), key: created.secret }, headers: NO_STORE };
      },
    }),

    defineRoute({
      method: 'get',
      path: '/v1/teams/{team}/api-keys',
      operationId: 'listApiKeys',
      summary: 'List API keys',
      description: 'Owners, admins and platform staff see every key of the team; other members only their own personal keys. Newest first; only active keys unless `includeInactive`.',
      tags: ['api-keys'],
      auth: { callers: 'team members (their own personal keys); team owners and admins, platform staff (all keys); browser session only', team: TEAM_MEMBERS, platform: PLATFORM_STAFF },
      request: {
        params: z.object({ team: teamParam }),
        query: pageQuery.extend({ includeInactive: z.boolean().default(false).meta({ description: 'Include revoked and expired keys.' }) }),
      },
      responses: { 200: { description: 'A page of keys (never a secret: `hint` shows its last 4 characters)', schema: pageResponse(apiKeySchema) } },
      handler: async (ctx) => {
        const caller = callerOf(ctx);
        const response = await identity().listApiKeys({
          teamId: teamOf(ctx).id,
          page: { pageSize: ctx.query.limit, cursor: ctx.query.cursor ?? '' },
          personId: reachesAllKeys(caller, 'read') ? '' : (caller.personId ?? ''),
          serviceAccountId: '',
          includeInactive: ctx.query.includeInactive,
        });
        return { data: response.apiKeys.map(presentApiKey), nextCursor: response.page?.nextCursor || null };
      },
    }),

    defineRoute({
      method: 'get',
      path: '/v1/teams/{team}/api-keys/{keyId}',
      operationId: 'getApiKey',
      summary: 'Read an API key',
      tags: ['api-keys'],
      auth: { callers: 'team members (their own personal keys); team owners and admins, platform staff (all keys); browser session only', team: TEAM_MEMBERS, platform: PLATFORM_STAFF },
      request: { params: keyParams },
      responses: { 200: { description: 'The key (never its secret)', schema: apiKeySchema }, 404: { description: 'No such key, or not one the caller may see' } },
      handler: async (ctx) => ({ data: presentApiKey(await reachableKey(ctx, 'read')) }),
    }),

    defineRoute({
      method: 'delete',
      path: '/v1/teams/{team}/api-keys/{keyId}',
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key',
      description: 'The key answers 401 from its next request. Idempotent: revoking a revoked key returns it unchanged. Answers 200 with the revoked key.',
      tags: ['api-keys'],
      auth: { callers: 'team owners and admins (any key); team members (their own personal keys); browser session only', team: TEAM_MEMBERS },
      request: { params: keyParams },
      responses: { 200: { description: 'The revoked key', schema: apiKeySchema }, 404: { description: 'No such key, or not one the caller may revoke' } },
      handler: async (ctx) => {
        const key = await reachableKey(ctx, 'revoke');
        const revoked = await identity().revokeApiKey({ context: requestContextOf(ctx), teamId: teamOf(ctx).id, apiKeyId: key.id });
        return { data: presentApiKey(revoked) };
      },
    }),
  ];
}
