import type { ApproveCapabilityRequest, Capability } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { AppError, auditContext, writeAuditEvent } from '@platform/runtime';
import { SCHEMA, type CatalogDeps } from '../deps';
import { approveCapabilityRow, findServerCapability, toCapability } from '../store/capabilities-store';
import type { McpServerRow } from '../store/mcp-servers-mappers';
import { findTeamMcpServer } from '../store/mcp-servers-store';
import { findMcpServerById, publishStateOf } from '../store/publishing-store';
import { UUID } from './gateway-rules';
import { approverOf, teamPublishing } from './publish-policy';
import { announceServerExposureChange } from './refresh-exposure';

const SERVER_NOT_FOUND = () => AppError.notFound('MCP server');
const CAPABILITY_NOT_FOUND = () => AppError.notFound('Capability');

/** The server the request names: of the team on the team route; of any team on the platform admins' route. */
async function serverOf(deps: CatalogDeps, request: ApproveCapabilityRequest): Promise<McpServerRow> {
  if (!UUID.test(request.serverId)) throw SERVER_NOT_FOUND();
  const serverId = request.serverId.toLowerCase();
  let row: McpServerRow | null;
  if (request.asPlatformAdmin) row = await findMcpServerById(deps.db, serverId);
  else row = UUID.test(request.teamId) ? await findTeamMcpServer(deps.db, request.teamId.toLowerCase(), serverId) : null;
  if (!row) throw SERVER_NOT_FOUND();
  return row;
}

/**
 * Op 8: approves a capability as it is now, so the gateways expose it (again). On the team route only under the
 * team's `self_publish` policy (403 `approval_required` otherwise: a platform admin approves instead, through the
 * admin route, whatever the policy). A capability gone upstream is 409 `capability_gone`; when the request names the
 * fingerprint the approver saw (`expectedFingerprint`, the route's If-Match) and it is not the current one, 412
 * `precondition_failed`; one already approved as it is is 409 `not_changed`. Records the approver; audited
 * `capability.approve`.
 */
export async function approveCapability(deps: CatalogDeps, request: ApproveCapabilityRequest): Promise<Capability> {
  const server = await serverOf(deps, request);
  if (!UUID.test(request.capabilityId)) throw CAPABILITY_NOT_FOUND();
  const capabilityId = request.capabilityId.toLowerCase();
  if (!request.asPlatformAdmin) {
    const { team, policy } = await teamPublishing(deps, server.team_id);
    if (team.archived) throw new AppError('team_archived', 'The team is archived');
    if (policy !== 'self_publish') {
      // Existence first: an unknown capability is 404 whatever the policy.
      if (!(await findServerCapability(deps.db, server.id, capabilityId))) throw CAPABILITY_NOT_FOUND();
      throw new AppError('approval_required', 'The team\'s publish policy is approval_required: a platform admin approves capability changes');
    }
  }

  const { approved, published } = await deps.db.transaction(async (tx) => {
    const current = await findServerCapability(tx, server.id, capabilityId, true);
    if (!current) throw CAPABILITY_NOT_FOUND();
    if (current.gone_at !== null) throw new AppError('capability_gone', 'The capability is no longer offered by the MCP server');
    // Under the capability's lock, which a refresh holds while it stores a new definition: the approver approves the
    // definition they saw or nothing, never one that replaced it after they read it.
    if (request.expectedFingerprint !== undefined && request.expectedFingerprint !== current.fingerprint) {
      throw new AppError('precondition_failed', 'The capability\'s definition has changed since it was read (its fingerprint is not the one in If-Match); read it again and retry');
    }
    if (current.approved_fingerprint === current.fingerprint) throw new AppError('not_changed', 'The capability has no unapproved change');
    // Read under the capability's lock, not before: a publication (or review) committed since the server was read
    // would otherwise go unannounced. One still to come approves this capability too, so it waits for this lock and
    // announces after this commit.
    const state = await publishStateOf(tx, server.id);
    const updated = await approveCapabilityRow(tx, current.id, approverOf(request.context));
    await writeAuditEvent(tx, SCHEMA, {
      ...auditContext(request.context),
      teamId: server.team_id,
      action: 'capability.approve',
      target: { type: 'capability', id: current.id, label: `${current.kind}:${current.name}` },
      parent: { type: 'mcp_server', id: server.id, label: server.slug },
      before: { approvedFingerprint: current.approved_fingerprint },
      after: { approvedFingerprint: updated.approved_fingerprint },
      metadata: { kind: current.kind, name: current.name, changed: current.approved_fingerprint !== null, asPlatformAdmin: request.asPlatformAdmin },
    });
    return { approved: updated, published: state === 'published' };
  });
  // Only a published server's capabilities are exposed; approving one of a draft changes no gateway.
  if (published) await announceServerExposureChange(deps, server.id);
  return toCapability(approved);
}
