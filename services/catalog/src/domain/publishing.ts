import type { McpServer, PublishMcpServerRequest, ReviewMcpServerRequest } from '@platform/proto/gen/platform/catalog/v1/catalog';
import type { RequestContext } from '@platform/proto/gen/platform/common/v1/common';
import { AppError, auditContext, writeAuditEvent, type Transaction } from '@platform/runtime';
import { SCHEMA, type CatalogDeps } from '../deps';
import { writePublicationEvent } from '../events/publishing-events';
import { approvePresentCapabilities, presentCapabilitiesFingerprint } from '../store/capabilities-store';
import { toMcpServer, type McpServerRow } from '../store/mcp-servers-mappers';
import { findTeamMcpServer } from '../store/mcp-servers-store';
import { findMcpServerById, recordPublishRequest, recordReview } from '../store/publishing-store';
import { UUID } from './gateway-rules';
import { approverOf, teamPublishing, validNote } from './publish-policy';
import { announceServerExposureChange } from './refresh-exposure';

const NOT_FOUND = () => AppError.notFound('MCP server');
const invalidState = (message: string) => new AppError('invalid_state', message);
const DECISIONS = ['approve', 'reject'] as const;

/**
 * The precondition of a publication and of an approving review: when the caller names the server's
 * `capabilitiesFingerprint` as read, the present capabilities are still that set, so the approval covers exactly what
 * was seen (docs/catalog.md, Publishing and approvals). Call it under the server's row lock: a refresh stores
 * capabilities only while it holds that lock (capabilities.ts, lockedAsProbed), so none is added, redefined or gone
 * between this comparison and the approving UPDATE, and one committed while this request waited for the lock is seen
 * here. Read in a statement of its own, not from the locked row's view: a SELECT … FOR UPDATE that waited for a
 * refresh re-reads the server row, but its capability subquery keeps the snapshot taken before the wait.
 */
async function assertCapabilitiesAsSeen(tx: Transaction, serverId: string, expected: string | undefined): Promise<void> {
  if (expected === undefined) return;
  if ((await presentCapabilitiesFingerprint(tx, serverId)) === expected) return;
  throw new AppError(
    'precondition_failed',
    "The MCP server's capabilities have changed since they were read (capabilitiesFingerprint is not the current one); read them again and retry",
  );
}

/** The audit metadata naming the capabilities' digest the request was checked against, when it named one. */
const checkedAgainst = (expected: string | undefined) => (expected === undefined ? {} : { capabilitiesFingerprint: expected });

async function auditPublication(
  tx: Transaction,
  context: RequestContext | undefined,
  action: string,
  before: McpServerRow,
  after: McpServerRow,
  metadata: Record<string, unknown>,
) {
  await writeAuditEvent(tx, SCHEMA, {
    ...auditContext(context),
    teamId: before.team_id,
    action,
    target: { type: 'mcp_server', id: before.id, label: before.slug },
    before: { publishState: before.publish_state },
    after: { publishState: after.publish_state },
    metadata,
  });
}

/**
 * A team asks to publish its server. Under `approval_required` the server becomes `pending` until a platform admin
 * reviews it (audited `mcp_server.publish_request`, event `mcp_server.publish_requested`); under `self_publish` it
 * is published at once and its present capabilities are approved as they are now (audited `mcp_server.publish`).
 * `capabilitiesFingerprint`, when given, is checked first whatever the policy (412 `precondition_failed`,
 * assertCapabilitiesAsSeen). A published server, or under `approval_required` one already pending, is 409
 * `invalid_state`: nothing to do.
 */
export async function publishMcpServer(deps: CatalogDeps, request: PublishMcpServerRequest): Promise<McpServer> {
  const note = validNote(request.note);
  const { team, policy } = await teamPublishing(deps, request.teamId);
  if (team.archived) throw new AppError('team_archived', 'The team is archived');
  if (!UUID.test(request.serverId)) throw NOT_FOUND();
  const serverId = request.serverId.toLowerCase();
  const expected = request.capabilitiesFingerprint;

  const row = await deps.db.transaction(async (tx) => {
    const current = await findTeamMcpServer(tx, team.id, serverId, true);
    if (!current) throw NOT_FOUND();
    await assertCapabilitiesAsSeen(tx, serverId, expected);
    if (current.publish_state === 'published') throw invalidState('The MCP server is already published');
    if (policy === 'approval_required') {
      if (current.publish_state === 'pending') throw invalidState('The MCP server is already awaiting review');
      const updated = await recordPublishRequest(tx, serverId, 'pending', note);
      await auditPublication(tx, request.context, 'mcp_server.publish_request', current, updated, { policy, note, ...checkedAgainst(expected) });
      await writePublicationEvent(tx, 'mcp_server.publish_requested', updated, { requestedAt: updated.publish_requested_at, note });
      return updated;
    }
    const approvedCapabilities = await approvePresentCapabilities(tx, serverId, approverOf(request.context));
    const updated = await recordPublishRequest(tx, serverId, 'published', note);
    await auditPublication(tx, request.context, 'mcp_server.publish', current, updated, { policy, note, approvedCapabilities, ...checkedAgainst(expected) });
    await writePublicationEvent(tx, 'mcp_server.published', updated, { via: 'self_publish' });
    return updated;
  });
  if (row.publish_state === 'published') await announceServerExposureChange(deps, row.id);
  return toMcpServer(row, policy);
}

function validDecision(decision: string): (typeof DECISIONS)[number] {
  const found = DECISIONS.find((value) => value === decision);
  if (!found) throw AppError.invalid('Invalid decision', [{ field: 'decision', problem: `must be one of ${DECISIONS.join(', ')}` }]);
  return found;
}

/**
 * Op 2, a platform admin's review of any team's server. `approve` applies to pending servers only: published, with
 * its present capabilities approved as they are now, or, with `capabilitiesFingerprint`, as they were read (checked
 * first: assertCapabilitiesAsSeen). `reject` approves nothing, so that field with it is 400. `reject` applies to
 * pending and published servers: rejected, and a published one leaves the catalog. Anything else is 409
 * `invalid_state`. The reviewer's name and the note are kept on the server; audited `mcp_server.review`.
 */
export async function reviewMcpServer(deps: CatalogDeps, request: ReviewMcpServerRequest): Promise<McpServer> {
  const decision = validDecision(request.decision);
  const expected = request.capabilitiesFingerprint;
  if (decision === 'reject' && expected !== undefined) {
    throw AppError.invalid('capabilitiesFingerprint applies to an approval only', [
      { field: 'capabilitiesFingerprint', problem: 'must be absent when the decision is reject' },
    ]);
  }
  const note = validNote(request.note);
  const found = UUID.test(request.serverId) ? await findMcpServerById(deps.db, request.serverId.toLowerCase()) : null;
  if (!found) throw NOT_FOUND();
  const { policy } = await teamPublishing(deps, found.team_id);
  const reviewer = approverOf(request.context);

  let leftCatalog = false;
  const row = await deps.db.transaction(async (tx) => {
    const current = await findMcpServerById(tx, found.id, true);
    if (!current) throw NOT_FOUND();
    let updated: McpServerRow;
    if (decision === 'approve') {
      await assertCapabilitiesAsSeen(tx, current.id, expected);
      if (current.publish_state !== 'pending') throw invalidState(`Only a pending MCP server can be approved; this one is ${current.publish_state}`);
      const approvedCapabilities = await approvePresentCapabilities(tx, current.id, reviewer);
      updated = await recordReview(tx, current.id, 'published', reviewer, note);
      await auditPublication(tx, request.context, 'mcp_server.review', current, updated, { decision, note, approvedCapabilities, ...checkedAgainst(expected) });
      await writePublicationEvent(tx, 'mcp_server.published', updated, { via: 'review', note });
    } else {
      if (current.publish_state !== 'pending' && current.publish_state !== 'published') {
        throw invalidState(`Only a pending or published MCP server can be rejected; this one is ${current.publish_state}`);
      }
      leftCatalog = current.publish_state === 'published';
      updated = await recordReview(tx, current.id, 'rejected', reviewer, note);
      await auditPublication(tx, request.context, 'mcp_server.review', current, updated, { decision, note });
      await writePublicationEvent(tx, 'mcp_server.rejected', updated, { wasPublished: leftCatalog, note });
    }
    return updated;
  });
  if (decision === 'approve' || leftCatalog) await announceServerExposureChange(deps, row.id);
  return toMcpServer(row, policy);
}
