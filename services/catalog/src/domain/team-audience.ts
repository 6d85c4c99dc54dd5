import type { CatalogDeps } from '../deps';
import type { TeamAudience } from '../store/visibility';

/** Who a team is for the catalog's offers: its id, and whether it is a personal workspace (identity's answer). */
export async function teamAudienceOf(deps: CatalogDeps, teamId: string): Promise<TeamAudience> {
  const team = await deps.clients.identity.getTeam({ teamRef: teamId });
  return { teamId: team.id, personal: team.kind === 'personal' };
}
