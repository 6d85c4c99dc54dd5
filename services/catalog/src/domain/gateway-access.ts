import type { CheckGatewayAccessRequest, CheckGatewayAccessResponse } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { AppError } from '@platform/runtime';
import type { CatalogDeps } from '../deps';
import { findGatewayBySlug } from '../store/gateways-store';
import { toGateway } from '../store/mappers';
import { isGatewaySlug, UUID } from './gateway-rules';

const REFUSED: CheckGatewayAccessResponse = { allowed: false };

/**
 * May this person use the gateway at /mcp/{slug} now? Only when the gateway exists, is enabled, its team is not
 * archived, and the person is an active member of the team (any role). Every refusal is the same answer, so a caller cannot tell an
 * unknown gateway from a disabled one or one they may not use (OAuth authorize rule 8, /mcp checks).
 */
export async function checkGatewayAccess(deps: CatalogDeps, request: CheckGatewayAccessRequest): Promise<CheckGatewayAccessResponse> {
  if (!isGatewaySlug(request.slug) || !UUID.test(request.personId)) return REFUSED;
  const row = await findGatewayBySlug(deps.db, request.slug);
  if (!row || !row.enabled) return REFUSED;
  const [member, team] = await Promise.all([
    membershipOf(deps, row.team_id, request.personId.toLowerCase()),
    deps.clients.identity.getTeam({ teamRef: row.team_id }),
  ]);
  if (!member || member.person?.status !== 'active' || team.archived) return REFUSED;
  return { allowed: true, gateway: toGateway(row) };
}

/** The person's membership of the team, from identity; null when there is none. */
async function membershipOf(deps: CatalogDeps, teamId: string, personId: string) {
  try {
    return await deps.clients.identity.getMembership({ teamId, personId });
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') return null;
    throw error;
  }
}
