import { AppError, PLATFORM_TEAM_ID } from '@platform/runtime';
import type { CatalogDeps } from '../deps';

/**
 * Resolves team references (slugs or ids) to team ids through identity, in parallel. Unknown teams, and the
 * platform team (it owns platform servers; offering one to it means nothing), are one 400 naming each.
 */
export async function resolveTeamRefs(deps: Pick<CatalogDeps, 'clients'>, refs: readonly string[]): Promise<string[]> {
  const found = await Promise.all(
    refs.map(async (ref) => {
      try {
        return await deps.clients.identity.getTeam({ teamRef: ref });
      } catch (error) {
        if (error instanceof AppError && (error.code === 'not_found' || error.code === 'invalid_request')) return null;
        throw error;
      }
    }),
  );
  const unknown = refs.filter((_, index) => !found[index]);
  const platform = refs.filter((_, index) => found[index]?.id === PLATFORM_TEAM_ID);
  const problems = [
    ...unknown.map((ref) => ({ field: 'teams', problem: `no team "${ref}"` })),
    ...platform.map((ref) => ({ field: 'teams', problem: `"${ref}" is the platform team, which owns platform servers` })),
  ];
  if (problems.length > 0) throw AppError.invalid(`Unknown or unusable teams: ${[...unknown, ...platform].join(', ')}`, problems);
  return [...new Set(found.map((team) => team!.id))];
}
