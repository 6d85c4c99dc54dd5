import { z } from 'zod';
import type { Capability, McpServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { PUBLISH_POLICIES } from '@platform/runtime';
import { MCP_SERVER_MANAGERS, type RoutePolicy } from '../auth/policy';
import { requestContextOf, teamOf } from '../auth/caller';
import { parseIfMatchFingerprint } from '../conditional';
import type { EdgeDeps } from '../edge-deps';
import { capabilitySchema, presentCapability } from '../presenters/capability';
import { mcpServerSchema, presentMcpServer } from '../presenters/mcp-server';
import { presentPublishingOverride, publishingOverrideSchema } from '../presenters/publishing-override';
import { defineRoute, type AnyRouteDefinition } from '../route';
import { teamParam } from '../team-ref';

const PLATFORM_ADMINS: RoutePolicy = { callers: 'platform admins', platform: ['admin'] };
const TEAM_APPROVERS: RoutePolicy = { ...MCP_SERVER_MANAGERS, callers: 'team owners and admins, only under `self_publish`; platform admins (platform team)' };

const serverId = z.uuid().meta({ description: 'MCP server id.' });
const capabilityId = z.uuid().meta({ description: 'Capability id.' });
const note = z.string().max(2000).meta({ description: 'Free text kept on the server (at most 2000 characters).' });
/** The body field naming the capabilities the caller saw (the server view's `capabilitiesFingerprint`); `when` says when it applies. */
const capabilitiesFingerprint = (when: string) =>
  z.string().min(1).max(128).meta({
    description:
      `${when}: the server's \`capabilitiesFingerprint\` as read, before the capabilities it vouches for. The request ` +
      'then applies only while the server\'s present capabilities are that set: a capability added, redefined or gone ' +
      'since is 412 `precondition_failed`, and nothing changes. Without it, the capabilities are approved as they are ' +
      'now (at most 128 characters).',
  });
/** Both routes' precondition on the capabilities, named in their descriptions (docs/catalog.md, Publishing and approvals). */
const STALE_CAPABILITIES = 'The server\'s capabilities are no longer the set `capabilitiesFingerprint` names: discovery stored a change since they were read (`precondition_failed`)';

/** Both approval routes take the definition the approver saw as an optional precondition (docs/catalog.md). */
const APPROVAL_PRECONDITION =
  'Optional `If-Match: "<fingerprint>"` (the capability\'s `fingerprint` as read) approves only that definition: ' +
  'another current one is 412 `precondition_failed` and nothing changes; without it, or with `*`, the current one ' +
  'is approved. A list, a weak tag or an unquoted value is 400.';
const APPROVED = 'The approved capability; `ETag` is its approved fingerprint, quoted';
const STALE_FINGERPRINT = 'The capability\'s fingerprint is not the one in `If-Match`: redefined since it was read (`precondition_failed`)';

/** The approval's answer: the capability, and the definition approved as its ETag. */
const approvedCapability = (capability: Capability) => ({ data: presentCapability(capability), headers: { ETag: `"${capability.fingerprint}"` } });

/**
 * Publishing (ops 2 and 13) and capability approvals (op 8): a team asks to publish its server, a platform admin
 * reviews it; approvals make a new or changed capability visible through gateways.
 */
export function publishingRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  // Read at request time: the route catalogue builds routes without clients.
  const catalog = () => deps.clients.catalog;
  const identity = () => deps.clients.identity;
  const defaultPolicy = () => deps.settings.defaultPublishPolicy ?? 'approval_required';
  /** An admin route names no team: the server's own is read to present it. */
  const presentWithTeam = async (server: McpServer) => presentMcpServer(server, await identity().getTeam({ teamRef: server.teamId }));

  return [
    defineRoute({
      method: 'post',
      path: '/v1/teams/{team}/mcp-servers/{serverId}/publish',
      operationId: 'publishMcpServer',
      summary: 'Publish an MCP server, or ask for its review',
      description:
        'Under the team\'s effective policy `approval_required` the server becomes `pending` until a platform admin ' +
        'reviews it; under `self_publish` it is `published` at once and its present capabilities are approved as ' +
        'they are, or, with `capabilitiesFingerprint`, as they were read (checked whatever the policy, before the state). ' +
        'A published server, or one already pending under `approval_required`, is 409 `invalid_state`. ' +
        'Audited as `mcp_server.publish_request` or `mcp_server.publish`.',
      tags: ['mcp-servers'],
      auth: MCP_SERVER_MANAGERS,
      request: {
        params: z.object({ team: teamParam, serverId }),
        body: z.object({ note: note.optional(), capabilitiesFingerprint: capabilitiesFingerprint('Whatever the policy').optional() }),
      },
      responses: {
        200: { description: 'The server, pending or published', schema: mcpServerSchema, etag: true },
        409: { description: 'Already published, or already pending (`invalid_state`); the team is archived (`team_archived`)' },
        412: { description: STALE_CAPABILITIES },
      },
      handler: async (ctx) => {
        const team = teamOf(ctx);
        const server = await catalog().publishMcpServer({
          context: requestContextOf(ctx),
          teamId: team.id,
          serverId: ctx.params.serverId,
          note: ctx.body.note ?? '',
          capabilitiesFingerprint: ctx.body.capabilitiesFingerprint,
        });
        const data = presentMcpServer(server, team);
        return { data, revision: data.revision };
      },
    }),

    defineRoute({
      method: 'post',
      path: '/v1/admin/mcp-servers/{serverId}/review',
      operationId: 'reviewMcpServer',
      summary: 'Approve or reject an MCP server\'s publication',
      description:
        '`approve` applies to pending servers only: the server is published and its present capabilities are ' +
        'approved as they are, or, with `capabilitiesFingerprint`, as they were read (checked before the state). ' +
        '`capabilitiesFingerprint` with `reject` is 400 (it approves nothing). `reject` applies to pending and published servers (a published one leaves the ' +
        'catalog). Otherwise 409 `invalid_state`. The reviewer\'s name and the note are kept on the server. Audited as ' +
        '`mcp_server.review` in the server\'s team.',
      tags: ['mcp-servers'],
      auth: PLATFORM_ADMINS,
      request: {
        params: z.object({ serverId }),
        body: z.object({
          decision: z.enum(['approve', 'reject']),
          note: note.optional(),
          capabilitiesFingerprint: capabilitiesFingerprint('With `approve` only').optional(),
        }),
      },
      responses: {
        200: { description: 'The reviewed server', schema: mcpServerSchema, etag: true },
        400: { description: 'Invalid request: `error.fields` names every invalid field; `capabilitiesFingerprint` with `reject` is one' },
        409: { description: 'The decision does not apply to the server\'s publish state (`invalid_state`)' },
        412: { description: STALE_CAPABILITIES },
      },
      handler: async (ctx) => {
        const server = await catalog().reviewMcpServer({
          context: requestContextOf(ctx),
          serverId: ctx.params.serverId,
          decision: ctx.body.decision,
          note: ctx.body.note ?? '',
          capabilitiesFingerprint: ctx.body.capabilitiesFingerprint,
        });
        const data = await presentWithTeam(server);
        return { data, revision: data.revision };
      },
    }),

    defineRoute({
      method: 'put',
      path: '/v1/teams/{team}/mcp-servers/{serverId}/capabilities/{capabilityId}/approval',
      operationId: 'approveCapability',
      summary: 'Approve a new or changed capability',
      description:
        'Approves the capability as it is now, so gateways expose it. Only under the team\'s effective policy ' +
        '`self_publish` (403 `approval_required` otherwise: a platform admin approves instead). ' +
        APPROVAL_PRECONDITION +
        ' Audited as `capability.approve`.',
      tags: ['mcp-servers'],
      auth: TEAM_APPROVERS,
      request: { params: z.object({ team: teamParam, serverId, capabilityId }), headers: { ifMatchFingerprint: true } },
      responses: {
        200: { description: APPROVED, schema: capabilitySchema },
        403: { description: 'The team\'s effective policy is `approval_required` (`approval_required`)' },
        409: { description: 'Nothing to approve (`not_changed`); gone upstream (`capability_gone`); the team is archived (`team_archived`)' },
        412: { description: STALE_FINGERPRINT },
      },
      handler: async (ctx) => {
        const capability = await catalog().approveCapability({
          context: requestContextOf(ctx),
          teamId: teamOf(ctx).id,
          serverId: ctx.params.serverId,
          capabilityId: ctx.params.capabilityId,
          asPlatformAdmin: false,
          expectedFingerprint: parseIfMatchFingerprint(ctx.req.headers['if-match']),
        });
        return approvedCapability(capability);
      },
    }),

    defineRoute({
      method: 'put',
      path: '/v1/admin/mcp-servers/{serverId}/capabilities/{capabilityId}/approval',
      operationId: 'adminApproveCapability',
      summary: 'Approve a new or changed capability of any team\'s server',
      description: `Whatever the team's publish policy. ${APPROVAL_PRECONDITION} Audited as \`capability.approve\` in the server's team.`,
      tags: ['mcp-servers'],
      auth: PLATFORM_ADMINS,
      request: { params: z.object({ serverId, capabilityId }), headers: { ifMatchFingerprint: true } },
      responses: {
        200: { description: APPROVED, schema: capabilitySchema },
        409: { description: 'Nothing to approve (`not_changed`); gone upstream (`capability_gone`)' },
        412: { description: STALE_FINGERPRINT },
      },
      handler: async (ctx) => {
        const capability = await catalog().approveCapability({
          context: requestContextOf(ctx),
          teamId: '',
          serverId: ctx.params.serverId,
          capabilityId: ctx.params.capabilityId,
          asPlatformAdmin: true,
          expectedFingerprint: parseIfMatchFingerprint(ctx.req.headers['if-match']),
        });
        return approvedCapability(capability);
      },
    }),

    defineRoute({
      method: 'get',
      path: '/v1/admin/teams/{team}/publishing',
      operationId: 'getTeamPublishing',
      summary: 'Read a team\'s publishing override',
      tags: ['teams'],
      auth: { callers: 'platform admins and auditors', platform: ['admin', 'auditor'] },
      request: { params: z.object({ team: teamParam }) },
      responses: { 200: { description: 'The override, what applies, and the platform default', schema: publishingOverrideSchema, etag: true } },
      handler: async (ctx) => {
        const team = await identity().getTeam({ teamRef: teamOf(ctx).id });
        const data = presentPublishingOverride(team, defaultPolicy());
        return { data, revision: data.revision ?? undefined };
      },
    }),

    defineRoute({
      method: 'put',
      path: '/v1/admin/teams/{team}/publishing',
      operationId: 'setTeamPublishing',
      summary: 'Set or clear a team\'s publishing override',
      description:
        'If-Match is the team\'s revision (the change moves it on). `override: null` clears it, so the platform ' +
        'default applies. The platform team takes no override (400): its servers are always published directly. ' +
        'Audited as `team.publishing_override_update` with the old and new value.',
      tags: ['teams'],
      auth: PLATFORM_ADMINS,
      request: {
        params: z.object({ team: teamParam }),
        headers: { ifMatch: true },
        body: z.object({ override: z.enum(PUBLISH_POLICIES).nullable().meta({ description: 'A policy, or null to clear the override.' }) }),
      },
      responses: {
        200: { description: 'The override after the change', schema: publishingOverrideSchema },
        400: { description: 'An unknown policy, or an override on the platform team (field `override`)' },
        409: { description: 'The team is archived (`team_archived`)' },
      },
      handler: async (ctx) => {
        const team = await identity().setTeamPublishingOverride({
          context: requestContextOf(ctx),
          teamRef: teamOf(ctx).id,
          expectedRevision: String(ctx.ifMatch),
          override: ctx.body.override ?? '',
        });
        const data = presentPublishingOverride(team, defaultPolicy());
        return { data, revision: data.revision ?? undefined };
      },
    }),
  ];
}
