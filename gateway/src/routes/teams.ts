import { z } from 'zod';
import { TeamRole } from '@platform/proto/gen/platform/identity/v1/identity';
import { AppError } from '@platform/runtime';
import { callerOf, requestContextOf, teamOf, type Caller } from '../auth/caller';
import { teamRoleFromName, TEAM_ROLES } from '../auth/roles';
import type { EdgeDeps } from '../edge-deps';
import { pageQuery, pageResponse } from '../pagination';
import { uuid } from '../presenters/common';
import { memberSchema, memberTeamSchema, presentMember, presentMemberTeam } from '../presenters/member';
import { presentTeam, teamSchema } from '../presenters/team';
import { defineRoute, type AnyRouteDefinition } from '../route';
import { slugSchema } from '../slug';
import { teamParam } from '../team-ref';

const slug = slugSchema({ description: 'Unique across the installation; used in paths in place of the id.', example: 'acme' });
const name = z.string().trim().min(1).max(100);
const role = z.enum(TEAM_ROLES);
const teamParams = z.object({ team: teamParam });
const memberParams = z.object({ team: teamParam, personId: uuid });

const STAFF = ['admin', 'auditor', 'staff'] as const;
const ALL_TEAM_ROLES = ['owner', 'admin', 'editor', 'member'] as const;

/** Teams and memberships. Sessions only (the policy's default): API keys cannot manage teams. */
export function teamRoutes(deps: EdgeDeps): AnyRouteDefinition[] {

  return [
    defineRoute({
      method: 'post',
      path: '/v1/teams',
      operationId: 'createTeam',
      summary: 'Create a team',
      description: 'The team\'s first owner is `ownerId` when given, otherwise the caller. Audited as `team.create`.',
      tags: ['teams'],
      auth: { callers: 'platform admins', platform: ['admin'] },
      request: {
        body: z.object({
          slug,
          name,
          ownerId: uuid.optional().meta({ description: 'The person made the team\'s first owner; defaults to the caller.' }),
        }),
      },
      responses: {
        201: { description: 'The new team', schema: teamSchema, etag: true },
        404: { description: 'No person has the given ownerId' },
        409: { description: 'The slug is already taken' },
      },
      handler: async (ctx) => {
        const team = await deps.clients.identity.createTeam({
          context: requestContextOf(ctx),
          slug: ctx.body.slug,
          name: ctx.body.name,
          ownerPersonId: ctx.body.ownerId ?? '',
        });
        const data = presentTeam(team);
        return { status: 201, data, revision: data.revision };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/teams',
      operationId: 'listTeams',
      summary: 'List your teams (or, for platform staff, every team)',
      description: 'Ordered by slug. Archived teams only with `includeArchived=true`. Each team carries your role in it.',
      tags: ['teams'],
      auth: { callers: 'signed-in people (their own teams); platform staff with all=true (every team)' },
      request: {
        query: pageQuery.extend({
          all: z.boolean().default(false).meta({ description: 'Every team of the installation (platform staff only).' }),
          kind: z.enum(['team', 'personal', 'platform']).optional(),
          includeArchived: z.boolean().default(false),
        }),
      },
      responses: { 200: { description: 'A page of teams', schema: pageResponse(memberTeamSchema) } },
      handler: async (ctx) => {
        const caller = callerOf(ctx);
        const all = ctx.query.all;
        if (all && !(caller.platformRole && (STAFF as readonly string[]).includes(caller.platformRole))) {
          throw AppError.forbidden('Only platform staff may list every team');
        }
        const list = await deps.clients.identity.listTeams({
          page: { pageSize: ctx.query.limit, cursor: ctx.query.cursor ?? '' },
          memberPersonId: all ? '' : (caller.personId ?? ''),
          includeArchived: ctx.query.includeArchived,
          kind: ctx.query.kind ?? '',
          roleOfPersonId: caller.personId ?? '',
        });
        return { data: list.teams.map((team, index) => presentMemberTeam(team, list.roles[index])), nextCursor: list.page?.nextCursor || null };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/teams/{team}',
      operationId: 'getTeam',
      summary: 'Read a team',
      tags: ['teams'],
      auth: { callers: 'team members; platform staff', team: ALL_TEAM_ROLES, platform: STAFF },
      request: { params: teamParams },
      responses: { 200: { description: 'The team, with your role in it', schema: memberTeamSchema, etag: true } },
      handler: async (ctx) => {
        const caller = callerOf(ctx);
        const team = await deps.clients.identity.getTeam({ teamRef: teamOf(ctx).id });
        const data = presentMemberTeam(team, caller.team?.role ? teamRoleFromName(caller.team.role) : undefined);
        return { data, revision: data.revision };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/teams/{team}',
      operationId: 'updateTeam',
      summary: 'Rename, archive or unarchive a team',
      description:
        'Owners and admins rename; only owners archive or unarchive (platform admins may do both). An archived team ' +
        'is not renamed unless the same change unarchives it (409 `team_archived`). Personal workspaces and the ' +
        'platform team are never archived (409) and are renamed only by their owners (the platform team also by ' +
        'platform admins). Audited as `team.update`, `team.archive`, `team.unarchive`.',
      tags: ['teams'],
      auth: { callers: 'team owners and admins (archiving: owners); platform admins', team: ['owner', 'admin'], platform: ['admin'] },
      request: {
        params: teamParams,
        headers: { ifMatch: true },
        body: z.object({ name: name.optional(), archived: z.boolean().optional() }),
      },
      responses: {
        200: { description: 'The changed team', schema: teamSchema },
        409: { description: 'The team is archived (`team_archived`), or is a personal workspace or the platform team (`conflict`)' },
      },
      handler: async (ctx) => {
        const caller = callerOf(ctx);
        const team = teamOf(ctx);
        const owner = caller.team?.role === 'owner';
        const platformAdmin = caller.platformRole === 'admin';
        if (ctx.body.archived !== undefined && !owner && !platformAdmin) throw AppError.forbidden('Only team owners may archive or unarchive a team');
        if (ctx.body.name !== undefined && team.kind !== 'team' && !owner && !(team.kind === 'platform' && platformAdmin)) {
          throw AppError.forbidden(`Only the owners may rename ${team.kind === 'personal' ? 'a personal workspace' : 'the platform team'}`);
        }
        const updated = await deps.clients.identity.updateTeam({
          context: requestContextOf(ctx),
          teamId: team.id,
          expectedRevision: String(ctx.ifMatch),
          ...(ctx.body.name !== undefined ? { name: ctx.body.name } : {}),
          ...(ctx.body.archived !== undefined ? { archived: ctx.body.archived } : {}),
        });
        const data = presentTeam(updated);
        return { data, revision: data.revision };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/teams/{team}/members',
      operationId: 'listMembers',
      summary: 'List a team\'s members',
      description: 'Ordered by email.',
      tags: ['teams'],
      auth: { callers: 'team members; platform staff', team: ALL_TEAM_ROLES, platform: STAFF },
      request: { params: teamParams, query: pageQuery },
      responses: { 200: { description: 'A page of members', schema: pageResponse(memberSchema) } },
      handler: async (ctx) => {
        const list = await deps.clients.identity.listMembers({ teamId: teamOf(ctx).id, page: { pageSize: ctx.query.limit, cursor: ctx.query.cursor ?? '' } });
        return { data: list.members.map(presentMember), nextCursor: list.page?.nextCursor || null };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/teams/{team}/members',
      operationId: 'addMember',
      summary: 'Add an existing person to a team',
      description:
        'Give exactly one of `personId` and `email`. Only owners grant the owner role. Personal workspaces take no ' +
        'members (409 `conflict`); archived teams take no changes (409 `team_archived`). Audited as `team.member_add`.',
      tags: ['teams'],
      auth: { callers: 'team owners and admins; platform admins', team: ['owner', 'admin'], platform: ['admin'] },
      request: {
        params: teamParams,
        body: z.object({ personId: uuid.optional(), email: z.email().max(254).optional(), role }),
      },
      responses: {
        201: { description: 'The new membership', schema: memberSchema, etag: true },
        404: { description: 'No such person' },
        409: { description: 'Already a member; a personal workspace; or the team is archived (`team_archived`)' },
      },
      handler: async (ctx) => {
        const { personId, email } = ctx.body;
        if ((personId === undefined) === (email === undefined)) {
          throw AppError.invalid('Give either personId or email', [{ field: 'personId', problem: 'give exactly one of personId and email' }]);
        }
        const member = await deps.clients.identity.addMember({
          context: requestContextOf(ctx),
          teamId: teamOf(ctx).id,
          personId: personId ?? '',
          email: email ?? '',
          role: teamRoleFromName(ctx.body.role),
          callerRole: callerRoleOf(callerOf(ctx)),
        });
        const data = presentMember(member);
        return { status: 201, data, revision: data.revision };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/teams/{team}/members/{personId}',
      operationId: 'updateMember',
      summary: 'Change a member\'s role',
      description:
        'If-Match is the membership\'s revision. Only owners grant or take away the owner role; the last owner cannot ' +
        'be demoted (409). Audited as `team.member_role_change`.',
      tags: ['teams'],
      auth: { callers: 'team owners and admins; platform admins', team: ['owner', 'admin'], platform: ['admin'] },
      request: { params: memberParams, headers: { ifMatch: true }, body: z.object({ role }) },
      responses: {
        200: { description: 'The changed membership', schema: memberSchema },
        409: { description: 'The last owner; a personal workspace; or the team is archived (`team_archived`)' },
      },
      handler: async (ctx) => {
        const member = await deps.clients.identity.updateMember({
          context: requestContextOf(ctx),
          teamId: teamOf(ctx).id,
          personId: ctx.params.personId,
          expectedRevision: String(ctx.ifMatch),
          role: teamRoleFromName(ctx.body.role),
          callerRole: callerRoleOf(callerOf(ctx)),
        });
        const data = presentMember(member);
        return { data, revision: data.revision };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/teams/{team}/members/{personId}',
      operationId: 'removeMember',
      summary: 'Remove a member, or leave a team',
      description:
        'Owners and admins remove members; any member may remove themself (leave). Only owners remove an owner; the ' +
        'last owner cannot leave (409). The person\'s personal API keys of the team are revoked at once; service ' +
        'keys keep working. Audited as `team.member_remove`.',
      tags: ['teams'],
      auth: { callers: 'team owners and admins; any member removing themself; platform admins', team: ALL_TEAM_ROLES, platform: ['admin'] },
      request: { params: memberParams },
      responses: {
        204: { description: 'Removed' },
        409: { description: 'The last owner; a personal workspace; or the team is archived (`team_archived`)' },
      },
      handler: async (ctx) => {
        const caller = callerOf(ctx);
        const manages = caller.platformRole === 'admin' || caller.team?.role === 'owner' || caller.team?.role === 'admin';
        if (!manages && ctx.params.personId.toLowerCase() !== caller.personId) throw AppError.forbidden('Only team owners and admins may remove other members');
        await deps.clients.identity.removeMember({
          context: requestContextOf(ctx),
          teamId: teamOf(ctx).id,
          personId: ctx.params.personId,
          callerRole: callerRoleOf(caller),
        });
        return { status: 204 };
      },
    }),
  ];
}

/**
 * The role the identity service weighs for the owner-role rule: the caller's own, except that platform admins
 * count as owners (so a team whose owners are gone can still be given one).
 */
function callerRoleOf(caller: Caller): TeamRole {
  if (caller.platformRole === 'admin') return TeamRole.TEAM_ROLE_OWNER;
  return caller.team?.role ? teamRoleFromName(caller.team.role) : TeamRole.TEAM_ROLE_UNSPECIFIED;
}
