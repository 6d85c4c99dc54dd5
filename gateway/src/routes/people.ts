import { z } from 'zod';
import { platformRoleFromName, PLATFORM_ROLES } from '../auth/roles';
import { requestContextOf } from '../auth/caller';
import type { EdgeDeps } from '../edge-deps';
import { pageQuery, pageResponse } from '../pagination';
import { uuid } from '../presenters/common';
import { personSchema, presentPerson } from '../presenters/person';
import { defineRoute, type AnyRouteDefinition } from '../route';

const personParams = z.object({ personId: uuid });
const displayName = z.string().trim().min(1).max(100);
const password = z.string().min(12).max(512).meta({ description: 'At least 12 characters; never returned or logged.' });

/** People administration under /v1/admin: platform admins change, auditors read. Sessions only (policy). */
export function peopleRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  // Resolved per request: the clients connect lazily, and routes are also built without a platform (docs).
  const identity = () => deps.clients.identity;
  return [
    defineRoute({
      method: 'post',
      path: '/v1/admin/people',
      operationId: 'createPerson',
      summary: 'Create a person (with their personal workspace)',
      tags: ['people'],
      auth: { callers: 'platform admins', platform: ['admin'] },
      request: {
        body: z.object({
          email: z.email().max(254),
          displayName,
          password: password.optional(),
          platformRole: z.enum(PLATFORM_ROLES).nullable().optional(),
        }),
      },
      responses: {
        201: { description: 'The new person', schema: personSchema, etag: true },
        409: { description: 'A person with this email exists' },
      },
      handler: async (ctx) => {
        const person = await identity().createPerson({
          context: requestContextOf(ctx),
          email: ctx.body.email,
          displayName: ctx.body.displayName,
          password: ctx.body.password ?? '',
          platformRole: platformRoleFromName(ctx.body.platformRole ?? null),
        });
        const data = presentPerson(person);
        return { status: 201, data, revision: data.revision };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/admin/people',
      operationId: 'listPeople',
      summary: 'List people',
      tags: ['people'],
      auth: { callers: 'platform admins and auditors', platform: ['admin', 'auditor'] },
      request: {
        query: pageQuery.extend({
          query: z.string().max(200).optional().meta({ description: 'Case-insensitive match on email or display name.' }),
        }),
      },
      responses: { 200: { description: 'A page of people, ordered by email', schema: pageResponse(personSchema) } },
      handler: async (ctx) => {
        const list = await identity().listPeople({
          page: { pageSize: ctx.query.limit, cursor: ctx.query.cursor ?? '' },
          query: ctx.query.query ?? '',
        });
        return { data: list.people.map(presentPerson), nextCursor: list.page?.nextCursor || null };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/admin/people/{personId}',
      operationId: 'getPerson',
      summary: 'Read a person',
      tags: ['people'],
      auth: { callers: 'platform admins and auditors', platform: ['admin', 'auditor'] },
      request: { params: personParams },
      responses: { 200: { description: 'The person', schema: personSchema, etag: true } },
      handler: async (ctx) => {
        const data = presentPerson(await identity().getPerson({ personId: ctx.params.personId }));
        return { data, revision: data.revision };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/admin/people/{personId}',
      operationId: 'updatePerson',
      summary: 'Change a person: display name, status, platform role, password reset',
      description:
        'Suspending ends all their sessions at once; their personal API keys and OAuth tokens fail at the next request. ' +
        'A password reset ends their sessions. Admins cannot suspend or demote themselves (409).',
      tags: ['people'],
      auth: { callers: 'platform admins', platform: ['admin'] },
      request: {
        params: personParams,
        headers: { ifMatch: true },
        body: z.object({
          displayName: displayName.optional(),
          status: z.enum(['active', 'suspended']).optional(),
          platformRole: z.enum(PLATFORM_ROLES).nullable().optional().meta({ description: 'null clears the platform role.' }),
          password: password.optional(),
        }),
      },
      responses: {
        200: { description: 'The changed person', schema: personSchema },
        409: { description: 'An admin tried to suspend or demote themself' },
      },
      handler: async (ctx) => {
        const { displayName: name, status, platformRole, password: newPassword } = ctx.body;
        const person = await identity().updatePerson({
          context: requestContextOf(ctx),
          personId: ctx.params.personId,
          expectedRevision: String(ctx.ifMatch),
          ...(name !== undefined ? { displayName: name } : {}),
          ...(status !== undefined ? { status } : {}),
          ...(platformRole !== undefined ? { platformRole: platformRoleFromName(platformRole) } : {}),
          ...(newPassword !== undefined ? { password: newPassword } : {}),
        });
        const data = presentPerson(person);
        return { data, revision: data.revision };
      },
    }),
  ];
}
