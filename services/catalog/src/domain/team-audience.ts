import type { Team } from '@platform/proto/gen/platform/identity/v1/identity';
import type { CatalogDeps } from '../deps';
import type { TeamAudience } from '../store/visibility';

/** Who a team is for the catalog's offers: its id, and whether it is a personal workspace. */
export function audienceOf(team: Pick<Team, 'id' | 'kind'>): TeamAudience {
  return { teamId: team.id, personal: team.kind === 'personal' };
}

/** The team's audience, asking identity. */
export async function teamAudienceOf(deps: CatalogDeps, teamId: string): Promise<TeamAudience> {
  return audienceOf(await deps.clients.identity.getTeam({ teamRef: teamId }));
}
