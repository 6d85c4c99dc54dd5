import { z } from 'zod';
import { ActorKind } from '@platform/proto/gen/platform/common/v1/common';
import type { AuditEntry } from '@platform/proto/gen/platform/identity/v1/identity';
import { orNull, timestamp, toNumber } from './common';

const ACTOR_KINDS = ['user', 'api_key', 'service_account', 'system'] as const;
type ActorKindName = (typeof ACTOR_KINDS)[number];

const actorKind = z
  .enum(ACTOR_KINDS)
  .describe('`user`: a signed-in person; `api_key`: a personal or service key; `service_account`; `system`: the platform itself');

export const auditEntrySchema = z
  .object({
    id: z.number().int().meta({ format: 'int64' }),
    occurredAt: timestamp,
    actorKind,
    actorUserId: z.string().nullable(),
    teamId: z.string(),
    teamName: z.string().describe("The team's current name"),
    teamSlug: z.string().describe("The team's current slug"),
    action: z.string().meta({ example: 'team.member_add' }),
    actor: z.object({
      kind: actorKind,
      userId: z.string().nullable(),
      displayName: z.string().nullable(),
      email: z.string().nullable(),
      apiKeyName: z.string().nullable(),
    }),
    targetType: z.string(),
    targetId: z.string(),
    targetLabel: z.string().describe('The target as it was named when the action happened'),
    targetExists: z.boolean().describe('False once the target has been deleted'),
    parent: z.object({ type: z.string(), id: z.string(), label: z.string(), exists: z.boolean() }).optional(),
    before: z.unknown().nullable().describe('The target before the change (free-form; never secrets)'),
    after: z.unknown().nullable().describe('The target after the change (free-form; never secrets)'),
    metadata: z.record(z.string(), z.unknown()),
    requestId: z.string(),
    via: z.object({ kind: z.string().describe('`session`, `api_key`, …'), name: z.string() }).optional(),
    clientIp: z.string(),
  })
  .meta({ id: 'AuditEntry' });

export type AuditEntryJson = z.infer<typeof auditEntrySchema>;

const KIND_NAMES: Record<string, ActorKindName> = {
  [ActorKind.ACTOR_KIND_USER]: 'user',
  [ActorKind.ACTOR_KIND_API_KEY]: 'api_key',
  [ActorKind.ACTOR_KIND_SERVICE_ACCOUNT]: 'service_account',
  [ActorKind.ACTOR_KIND_SYSTEM]: 'system',
};

/** JSON text from the service (empty for none) → the value, or null. */
const parseJson = (text: string): unknown => (text ? JSON.parse(text) : null);

export function presentAuditEntry(entry: AuditEntry): AuditEntryJson {
  const kind = KIND_NAMES[entry.actor?.kind ?? ''] ?? 'system';
  const actorUserId = orNull(entry.actor?.userId);
  const parent = parseJson(entry.parentJson) as AuditEntryJson['parent'] | null;
  const metadata = parseJson(entry.metadataJson);
  return {
    id: toNumber(entry.id),
    occurredAt: entry.occurredAt ?? '',
    actorKind: kind,
    actorUserId,
    teamId: entry.teamId,
    teamName: entry.teamName,
    teamSlug: entry.teamSlug,
    action: entry.action,
    actor: {
      kind,
      userId: actorUserId,
      displayName: orNull(entry.actor?.displayName),
      email: orNull(entry.actor?.email),
      apiKeyName: orNull(entry.actor?.apiKeyName),
    },
    targetType: entry.targetType,
    targetId: entry.targetId,
    targetLabel: entry.targetLabel,
    targetExists: entry.targetExists,
    ...(parent ? { parent } : {}),
    before: parseJson(entry.beforeJson),
    after: parseJson(entry.afterJson),
    metadata: metadata && typeof metadata === 'object' ? (metadata as Record<string, unknown>) : {},
    requestId: entry.requestId,
    ...(entry.viaKind ? { via: { kind: entry.viaKind, name: entry.viaName } } : {}),
    clientIp: entry.clientIp,
  };
}
