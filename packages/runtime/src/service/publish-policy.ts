/** How a team's MCP servers get into the catalog (spec §2.13, §3): a platform admin's review, or directly. */
export const PUBLISH_POLICIES = ['approval_required', 'self_publish'] as const;
export type PublishPolicy = (typeof PUBLISH_POLICIES)[number];

export function isPublishPolicy(value: unknown): value is PublishPolicy {
  return typeof value === 'string' && (PUBLISH_POLICIES as readonly string[]).includes(value);
}

/**
 * The policy that applies to a team: its override when set, else the platform default (MCP_PUBLISH_POLICY).
 * The platform team's servers are managed by platform admins, the same people who would review them, so they are
 * always published directly (and the platform team takes no override).
 */
export function effectivePublishPolicy(team: { kind: string; publishingOverride: string }, defaultPolicy: PublishPolicy): PublishPolicy {
  if (team.kind === 'platform') return 'self_publish';
  return isPublishPolicy(team.publishingOverride) ? team.publishingOverride : defaultPolicy;
}
