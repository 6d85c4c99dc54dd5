import { AppError } from '@platform/runtime';
import type { IdentityDeps } from '../deps';
import { findMember, toMember } from '../store/membership-store';
import { addMember, listMembers, removeMember, updateMember } from '../domain/memberships';
import { createTeam, getTeam, listTeams, updateTeam } from '../domain/teams';
import { setTeamPublishingOverride } from '../domain/team-publishing';
import type { IdentityHandlers } from './handlers';

/** Teams and memberships; the rules live in domain/teams.ts, domain/team-publishing.ts and domain/memberships.ts. */
export function teamHandlers(
  deps: IdentityDeps,
): IdentityHandlers<
  'createTeam' | 'listTeams' | 'getTeam' | 'updateTeam' | 'setTeamPublishingOverride' | 'listMembers' | 'addMember' | 'updateMember' | 'removeMember' | 'getMembership'
> {
  return {
    createTeam: (request) => createTeam(deps, request),
    listTeams: (request) => listTeams(deps, request),
    getTeam: (request) => getTeam(deps, request),
    updateTeam: (request) => updateTeam(deps, request),
    setTeamPublishingOverride: (request) => setTeamPublishingOverride(deps, request),
    listMembers: (request) => listMembers(deps, request),
    addMember: (request) => addMember(deps, request),
    updateMember: (request) => updateMember(deps, request),
    removeMember: (request) => removeMember(deps, request),
    async getMembership(request) {
      const row = await findMember(deps.db, request.teamId, request.personId);
      if (!row) throw AppError.notFound('Membership');
      return toMember(row);
    },
  };
}
