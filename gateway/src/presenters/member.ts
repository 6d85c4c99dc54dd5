import { z } from 'zod';
import type { Member, Team, TeamRole } from '@platform/proto/gen/platform/identity/v1/identity';
import { teamRoleName, TEAM_ROLES } from '../auth/roles';
import { orNull, timestamp, toNumber, uuid } from './common';
import { presentTeam, teamSchema } from './team';

/**
 * A team membership. The person is shown as team members need to see each other (id, email, name, status),
 * never their platform role or sign-in times.
 */
export const memberSchema = z
  .object({
    teamId: uuid,
    personId: uuid,
    email: z.string(),
    displayName: z.string(),
    status: z.enum(['active', 'suspended']),
    role: z.enum(TEAM_ROLES),
    joinedAt: timestamp,
    revision: z.number().int().meta({ description: 'The membership\'s revision (ETag); send it as If-Match to change the role.' }),
  })
  .meta({ id: 'Member' });

export type MemberJson = z.infer<typeof memberSchema>;

export function presentMember(member: Member): MemberJson {
  const person = member.person;
  return {
    teamId: member.teamId,
    personId: person?.id ?? '',
    email: person?.email ?? '',
    displayName: person?.displayName ?? '',
    status: (person?.status ?? 'active') as MemberJson['status'],
    role: teamRoleName(member.role) ?? 'member',
    joinedAt: member.joinedAt ?? '',
    revision: toNumber(member.revision),
  };
}

/** A team as listed for a caller: with the caller's own role in it (null when they are not a member). */
export const memberTeamSchema = teamSchema
  .extend({ role: z.enum(TEAM_ROLES).nullable().meta({ description: 'Your role in the team; null when you are not a member.' }) })
  .meta({ id: 'TeamWithRole' });

export type MemberTeamJson = z.infer<typeof memberTeamSchema>;

export function presentMemberTeam(team: Team, role: TeamRole | undefined): MemberTeamJson {
  return { ...presentTeam(team), role: orNull(teamRoleName(role) ?? undefined) };
}
