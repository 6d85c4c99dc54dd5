import { z } from 'zod';
import type { Capability } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { orNull, timestamp, uuid } from './common';

const KINDS = ['tool', 'resource', 'resource_template', 'prompt'] as const;

/**
 * §2.5's auth-provider fields. Nothing can set a capability's own requirement yet, so every capability inherits its
 * server's (`inherit`, the one mode the spec names), and no server has one, so `requires` is null. Auth providers
 * (§2.6) and the other modes come in a later issue; the fields are present now so that clients of the spec find them.
 */
const requirementOverrideSchema = z
  .object({
    mode: z.enum(['inherit']).meta({ description: '`inherit`: the capability requires what its server requires. Later issues add modes.' }),
    scopes: z.array(z.string()),
  })
  .meta({ id: 'CapabilityRequirementOverride' });

const requiresSchema = z
  .object({
    providerId: uuid,
    providerSlug: z.string(),
    providerName: z.string(),
    scopes: z.array(z.string()),
    connected: z.boolean(),
    providerKind: z.string(),
  })
  .nullable()
  .meta({ description: 'The auth provider (§2.6) a caller must connect to use the capability; null when none (always, until auth providers arrive).' });

/**
 * A capability discovered on an MCP server (spec §2.5; auth-provider requirements come later, above). Resources
 * are named by URI and templates by URI template, the keys that are unique upstream.
 */
export const capabilitySchema = z
  .object({
    id: uuid,
    serverId: uuid,
    kind: z.enum(KINDS),
    name: z.string().meta({ description: 'The tool or prompt name; the URI of a resource; the URI template of a template.' }),
    title: z.string(),
    description: z.string(),
    definition: z.record(z.string(), z.unknown()).meta({ description: 'The canonical definition that the fingerprint covers.' }),
    fingerprint: z.string().meta({ description: 'Hex SHA-256 of the canonical definition (keys sorted).' }),
    approved: z.boolean(),
    changed: z.boolean().meta({
      description:
        'An unapproved change exists: the capability is new (never approved) or its definition changed since it was approved. ' +
        'Such a capability is hidden from gateways until approved; false once approved and while gone.',
    }),
    approvedAt: timestamp.nullable(),
    approvedByName: z.string().nullable(),
    firstSeenAt: timestamp,
    lastSeenAt: timestamp,
    goneAt: timestamp.nullable().meta({ description: 'Set while the capability is missing upstream.' }),
    requirementOverride: requirementOverrideSchema,
    requires: requiresSchema,
  })
  .meta({ id: 'Capability' });

export type CapabilityJson = z.infer<typeof capabilitySchema>;

export function presentCapability(capability: Capability): CapabilityJson {
  const kind = KINDS.find((value) => value === capability.kind) ?? 'tool';
  return {
    id: capability.id,
    serverId: capability.serverId,
    kind,
    name: capability.name,
    title: capability.title,
    description: capability.description,
    definition: capability.definitionJson ? (JSON.parse(capability.definitionJson) as Record<string, unknown>) : {},
    fingerprint: capability.fingerprint,
    approved: capability.approved,
    changed: capability.changed,
    approvedAt: orNull(capability.approvedAt),
    approvedByName: orNull(capability.approvedByName),
    firstSeenAt: capability.firstSeenAt ?? '',
    lastSeenAt: capability.lastSeenAt ?? '',
    goneAt: orNull(capability.goneAt),
    requirementOverride: { mode: 'inherit', scopes: [] },
    requires: null,
  };
}
