import { z } from 'zod';
import type { Team } from '@platform/proto/gen/platform/identity/v1/identity';
import { effectivePublishPolicy, isPublishPolicy, PUBLISH_POLICIES, type PublishPolicy } from '@platform/runtime';
import { toNumber } from './common';

const policy = z.enum(PUBLISH_POLICIES);

/** A team's publishing override (spec §2.13) beside what applies to the team and the platform default. */
export const publishingOverrideSchema = z
  .object({
    override: policy.nullable().meta({ description: 'The team\'s own policy; null follows the platform default.' }),
    effective: policy.meta({ description: 'What applies to the team now (the platform team\'s servers are always published directly: `self_publish`).' }),
    defaultPolicy: policy.meta({ description: 'The platform default (MCP_PUBLISH_POLICY).' }),
    revision: z.number().int().nullable().meta({ description: 'The team\'s revision: send it back in If-Match to change the override.' }),
  })
  .meta({ id: 'PublishingOverride' });

export type PublishingOverrideJson = z.infer<typeof publishingOverrideSchema>;

export function presentPublishingOverride(team: Team, defaultPolicy: PublishPolicy): PublishingOverrideJson {
  return {
    override: isPublishPolicy(team.publishingOverride) ? team.publishingOverride : null,
    effective: effectivePublishPolicy(team, defaultPolicy),
    defaultPolicy,
    revision: toNumber(team.revision),
  };
}
