import type { Team } from '@platform/proto/gen/platform/identity/v1/identity';
import type { RequestContext } from '@platform/proto/gen/platform/common/v1/common';
import { AppError, effectivePublishPolicy, type PublishPolicy } from '@platform/runtime';
import type { CatalogDeps } from '../deps';
import type { Approver } from '../store/capabilities-store';
import { UUID } from './gateway-rules';

export const NOTE_MAX_LENGTH = 2000;

/** A team (from identity, the owner of teams and their overrides) and the publish policy that applies to it now. */
export async function teamPublishing(deps: CatalogDeps, teamId: string): Promise<{ team: Team; policy: PublishPolicy }> {
  if (!UUID.test(teamId)) throw AppError.notFound('Team');
  const team = await deps.clients.identity.getTeam({ teamRef: teamId });
  return { team, policy: effectivePublishPolicy(team, deps.config.env.MCP_PUBLISH_POLICY) };
}

/**
 * The team, from identity: it must exist, and a team's changes to its servers need it not archived (409
 * `team_archived`); with its publish policy for the view. Platform admins' own operations (op 2, op 8's admin route,
 * op 16) and the platform's background work do not ask this.
 */
export async function writableTeam(deps: CatalogDeps, teamId: string): Promise<{ teamId: string; policy: PublishPolicy }> {
  const { team, policy } = await teamPublishing(deps, teamId);
  if (team.archived) throw new AppError('team_archived', 'The team is archived');
  return { teamId: team.id, policy };
}

/** The publish policy of a team, for the server view (one identity call per request, never per server). */
export async function publishPolicyOf(deps: CatalogDeps, teamId: string): Promise<PublishPolicy> {
  return (await teamPublishing(deps, teamId)).policy;
}

/** A publication or review note: trimmed, at most 2000 characters; empty means none. */
export function validNote(note: string): string | null {
  const trimmed = note.trim();
  if (trimmed.length > NOTE_MAX_LENGTH) throw AppError.invalid('Invalid note', [{ field: 'note', problem: `must be at most ${NOTE_MAX_LENGTH} characters` }]);
  return trimmed || null;
}

/** Who approves or reviews, as recorded: the acting person, by the name the request context carries. */
export function approverOf(context: RequestContext | undefined): Approver {
  const actor = context?.actor;
  return { id: actor?.userId || null, name: actor?.displayName || actor?.email || '' };
}
