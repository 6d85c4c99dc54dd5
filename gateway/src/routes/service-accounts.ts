import { z } from 'zod';
import { ApiKeyKind } from '@platform/proto/gen/platform/identity/v1/identity';
import { requestContextOf, teamOf, callerOf } from '../auth/caller';
import { teamRoleFromName } from '../auth/roles';
import type { EdgeDeps } from '../edge-deps';
import { pageQuery, pageResponse } from '../pagination';
import { apiKeySchema, createdApiKeySchema, presentApiKey } from '../presenters/api-key';
import { uuid } from '../presenters/common';
import { presentServiceAccount, SERVICE_ACCOUNT_NAME, SERVICE_ACCOUNT_ROLES, serviceAccountSchema } from '../presenters/service-account';
import { defineRoute, type AnyRouteDefinition } from '../route';
import { teamParam } from '../team-ref';
import { NO_STORE, newKeyFields } from './api-keys';

const MANAGERS = ['owner', 'admin'] as const;
const PLATFORM_STAFF = ['admin', 'auditor', 'staff'] as const;
const MANAGE = { callers: 'team owners and admins; browser session only', team: MANAGERS };
const READ = { callers: 'team owners and admins, platform staff; browser session only', team: MANAGERS, platform: PLATFORM_STAFF };

const name = z.string().regex(SERVICE_ACCOUNT_NAME, 'must be 1 to 64 lowercase letters, digits or inner hyphens');
const description = z.string().max(2000);
// Owner and admin are not in the enum (§2.14): asking for them is a 400 naming `role`.
const role = z.enum(SERVICE_ACCOUNT_ROLES).meta({ description: '`member` or `editor`; never owner or admin.' });

const accountParams = z.object({ team: teamParam, serviceAccountId: uuid });

export function serviceAccountRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  // Read at request time: the route catalogue builds routes without clients.
  const identity = () => deps.clients.identity;

  /** The account, or 404: also proves it belongs to the addressed team before its keys are touched. */
  const accountOf = (ctx: { auth: unknown; params: { serviceAccountId: string } }) =>
    identity().getServiceAccount({ teamId: teamOf(ctx).id, serviceAccountId: ctx.params.serviceAccountId });

  return [
    defineRoute({
      method: 'post',
      path: '/v1/teams/{team}/service-accounts',
      operationId: 'createServiceAccount',
      summary: 'Create a service account',
      tags: ['service-accounts'],
      auth: MANAGE,
      request: {
        params: z.object({ team: teamParam }),
        body: z.object({
          name,
          description: description.default(''),
          role: role.default('member'),
          enabled: z.boolean().default(true),
        }),
      },
      responses: {
        201: { description: 'The new service account', schema: serviceAccountSchema, etag: true },
        409: { description: 'The team already has a service account with this name' },
      },
      handler: async (ctx) => {
        const account = await identity().createServiceAccount({
          context: requestContextOf(ctx),
          teamId: teamOf(ctx).id,
          name: ctx.body.name,
          description: ctx.body.description,
          role: teamRoleFromName(ctx.body.role),
          enabled: ctx.body.enabled,
        });
        const data = presentServiceAccount(account);
        return { status: 201, data, revision: data.revision };
      },
    }),

    defineRoute({
      method: 'get',
      path: '/v1/teams/{team}/service-accounts',
      operationId: 'listServiceAccounts',
      summary: 'List service accounts',
      tags: ['service-accounts'],
      auth: READ,
      request: { params: z.object({ team: teamParam }), query: pageQuery },
      responses: { 200: { description: 'A page of service accounts, newest first', schema: pageResponse(serviceAccountSchema) } },
      handler: async (ctx) => {
        const response = await identity().listServiceAccounts({
          teamId: teamOf(ctx).id,
          page: { pageSize: ctx.query.limit, cursor: ctx.query.cursor ?? '' },
        });
        return { data: response.serviceAccounts.map(presentServiceAccount), nextCursor: response.page?.nextCursor || null };
      },
    }),

    defineRoute({
      method: 'get',
      path: '/v1/teams/{team}/service-accounts/{serviceAccountId}',
      operationId: 'getServiceAccount',
      summary: 'Read a service account',
      description: 'Op 14. The spec does not name the callers; the safer choice is the account\'s managers plus platform staff.',
      tags: ['service-accounts'],
      auth: READ,
      request: { params: accountParams },
      responses: { 200: { description: 'The service account', schema: serviceAccountSchema, etag: true } },
      handler: async (ctx) => {
        const data = presentServiceAccount(await accountOf(ctx));
        return { data, revision: data.revision };
      },
    }),

    defineRoute({
      method: 'patch',
      path: '/v1/teams/{team}/service-accounts/{serviceAccountId}',
      operationId: 'updateServiceAccount',
      summary: 'Change a service account',
      description: 'Op 15. Disabling makes the account\'s keys fail from their next request; enabling makes them work again.',
      tags: ['service-accounts'],
      auth: MANAGE,
      request: {
        params: accountParams,
        headers: { ifMatch: true },
        body: z.object({ name: name.optional(), description: description.optional(), role: role.optional(), enabled: z.boolean().optional() }),
      },
      responses: {
        200: { description: 'The changed service account', schema: serviceAccountSchema },
        409: { description: 'The team already has a service account with this name' },
      },
      handler: async (ctx) => {
        const account = await identity().updateServiceAccount({
          context: requestContextOf(ctx),
          teamId: teamOf(ctx).id,
          serviceAccountId: ctx.params.serviceAccountId,
          expectedRevision: String(ctx.ifMatch),
          ...(ctx.body.name !== undefined ? { name: ctx.body.name } : {}),
          ...(ctx.body.description !== undefined ? { description: ctx.body.description } : {}),
          ...(ctx.body.role !== undefined ? { role: teamRoleFromName(ctx.body.role) } : {}),
          ...(ctx.body.enabled !== undefined ? { enabled: ctx.body.enabled } : {}),
        });
        const data = presentServiceAccount(account);
        return { data, revision: data.revision };
      },
    }),

    defineRoute({
      method: 'delete',
      path: '/v1/teams/{team}/service-accounts/{serviceAccountId}',
      operationId: 'deleteServiceAccount',
      summary: 'Delete a service account',
      description: 'Its keys are deleted with it and stop working at once.',
      tags: ['service-accounts'],
      auth: MANAGE,
      request: { params: accountParams },
      responses: { 204: { description: 'Deleted' } },
      handler: async (ctx) => {
        await identity().deleteServiceAccount({
          context: requestContextOf(ctx),
          teamId: teamOf(ctx).id,
          serviceAccountId: ctx.params.serviceAccountId,
        });
        return { status: 204 };
      },
    }),

    defineRoute({
      method: 'post',
      path: '/v1/teams/{team}/service-accounts/{serviceAccountId}/keys',
      operationId: 'createServiceAccountKey',
      summary: 'Create a key for a service account',
      description: 'A service key that acts as the account (with its role). The response carries the full key once; it is never shown again.',
      tags: ['service-accounts'],
      auth: MANAGE,
      request: { params: accountParams, body: z.object(newKeyFields) },
      responses: { 201: { description: 'The new key, with the full key in `key` (this once)', schema: createdApiKeySchema } },
      handler: async (ctx) => {
        const account = await accountOf(ctx);
        const created = await identity().createApiKey({
          context: requestContextOf(ctx),
          teamId: account.teamId,
          name: ctx.body.name,
          kind: ApiKeyKind.API_KEY_KIND_SERVICE,
          scopes: ctx.body.scopes,
          ...(ctx.body.expiresAt ? { expiresAt: ctx.body.expiresAt } : {}),
          knowledgeBaseIds: ctx.body.knowledgeBaseIds ?? [],
          agentIds: ctx.body.agentIds ?? [],
          serviceAccountId: account.id,
          callerRole: teamRoleFromName(callerOf(ctx).team!.role!),
        });
        return { status: 201, data: { ...presentApiKey(created.apiKey!), key: created.secret }, headers: NO_STORE };
      },
    }),

    defineRoute({
      method: 'get',
      path: '/v1/teams/{team}/service-accounts/{serviceAccountId}/keys',
      operationId: 'listServiceAccountKeys',
      summary: 'List a service account\'s keys',
      tags: ['service-accounts'],
      auth: MANAGE,
      request: {
        params: accountParams,
        query: pageQuery.extend({ includeInactive: z.boolean().default(false).meta({ description: 'Include revoked and expired keys.' }) }),
      },
      responses: { 200: { description: 'A page of the account\'s keys (never a secret)', schema: pageResponse(apiKeySchema) } },
      handler: async (ctx) => {
        const account = await accountOf(ctx);
        const response = await identity().listApiKeys({
          teamId: account.teamId,
          page: { pageSize: ctx.query.limit, cursor: ctx.query.cursor ?? '' },
          personId: '',
          serviceAccountId: account.id,
          includeInactive: ctx.query.includeInactive,
        });
        return { data: response.apiKeys.map(presentApiKey), nextCursor: response.page?.nextCursor || null };
      },
    }),
  ];
}
