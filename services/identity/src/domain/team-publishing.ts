import type { SetTeamPublishingOverrideRequest, Team } from '@platform/proto/gen/platform/identity/v1/identity';
import { AppError, auditContext, isPublishPolicy, PUBLISH_POLICIES } from '@platform/runtime';
import { recordAudit } from './audit';
import type { IdentityDeps } from '../deps';
import { toTeam } from '../store/mappers';
import { lockTeam, setPublishingOverrideRow } from '../store/team-admin-store';
import { findTeamByRef } from '../store/teams-store';
import { expectedRevision, teamArchivedError } from './teams';

function invalidOverride(problem: string): AppError {
  return AppError.invalid('Invalid publishing override', [{ field: 'override', problem }]);
}

/**
 * Op 13: sets a team's MCP publishing override, or clears it (empty) so the platform default applies, when
 * `expected_revision` is the team's current revision; the change moves the team's revision on. The platform team
 * takes no override (its servers are always published directly); archived teams take no changes. Setting the
 * value the team already has changes nothing. Audited as `team.publishing_override_update` with from and to.
 */
export async function setTeamPublishingOverride(deps: IdentityDeps, request: SetTeamPublishingOverrideRequest): Promise<Team> {
  const expected = expectedRevision(request.expectedRevision);
  const override = request.override === '' ? null : request.override;
  if (override !== null && !isPublishPolicy(override)) throw invalidOverride(`must be one of ${PUBLISH_POLICIES.join(', ')}, or null to clear it`);
  const found = request.teamRef ? await findTeamByRef(deps.db, request.teamRef) : null;
  if (!found) throw AppError.notFound('Team');

  return deps.db.transaction(async (tx) => {
    const team = (await lockTeam(tx, found.id)) ?? throwNotFound();
    if (team.revision !== expected) throw new AppError('precondition_failed', 'The team has changed; read it again and retry');
    if (team.kind === 'platform' && override !== null) {
      throw invalidOverride('the platform team takes no override: platform admins publish its servers directly');
    }
    if (team.archived_at !== null) throw teamArchivedError();
    if (team.publishing_override === override) return toTeam(team);

    const updated = await setPublishingOverrideRow(tx, team.id, expected, override);
    await recordAudit(tx, {
      ...auditContext(request.context),
      teamId: team.id,
      action: 'team.publishing_override_update',
      target: { type: 'team', id: team.id, label: team.slug },
      before: { override: team.publishing_override },
      after: { override: updated.publishing_override },
    });
    return toTeam(updated);
  });
}

function throwNotFound(): never {
  throw AppError.notFound('Team');
}
