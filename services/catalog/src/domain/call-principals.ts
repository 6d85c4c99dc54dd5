import { AppError } from '@platform/runtime';
import type { CatalogDeps } from '../deps';
import { UUID } from './gateway-rules';

/**
 * A service account a call record names: its id and its team, by id when the record has it (`teamId`), else by
 * the slug recorded at the call or the record's team id (`teamRef`, records made before the team id was).
 */
export type ServiceAccountRef = { id: string; teamId: string } | { id: string; teamRef: string };

const notFound = (error: unknown): boolean =>
  error instanceof AppError && (error.code === 'not_found' || error.code === 'invalid_request');

/**
 * Which of these service accounts still exist, asked of identity (which owns them) when the records are read:
 * one lookup per distinct account and team, in parallel. A deleted account or team answers false.
 */
export async function existingServiceAccounts(deps: Pick<CatalogDeps, 'clients'>, refs: readonly ServiceAccountRef[]): Promise<Map<string, boolean>> {
  const distinct = new Map(refs.filter((ref) => UUID.test(ref.id)).map((ref) => [ref.id, ref]));
  const teams = new Map<string, Promise<string | null>>();
  const teamBySlug = (teamRef: string) => {
    let found = teams.get(teamRef);
    if (!found) {
      found = deps.clients.identity.getTeam({ teamRef }).then(
        (team) => team.id,
        (error: unknown) => {
          if (notFound(error)) return null;
          throw error;
        },
      );
      teams.set(teamRef, found);
    }
    return found;
  };
  // A slug names whichever team holds it now: after a rename none, or another team. Only older records need it.
  const teamOf = (ref: ServiceAccountRef): Promise<string | null> => ('teamId' in ref ? Promise.resolve(ref.teamId) : teamBySlug(ref.teamRef));
  const answers = await Promise.all(
    [...distinct.values()].map(async (ref): Promise<[string, boolean]> => {
      const team = await teamOf(ref);
      if (!team) return [ref.id, false];
      try {
        await deps.clients.identity.getServiceAccount({ teamId: team, serviceAccountId: ref.id });
        return [ref.id, true];
      } catch (error) {
        if (notFound(error)) return [ref.id, false];
        throw error;
      }
    }),
  );
  return new Map(answers);
}
