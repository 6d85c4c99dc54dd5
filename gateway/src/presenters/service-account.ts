import { z } from 'zod';
import type { ServiceAccount } from '@platform/proto/gen/platform/identity/v1/identity';
import { teamRoleName } from '../auth/roles';
import { orNull, timestamp, toNumber, uuid } from './common';

/** §2.14: the pattern of a service account's name. */
export const SERVICE_ACCOUNT_NAME = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
export const SERVICE_ACCOUNT_ROLES = ['member', 'editor'] as const;

/** A service account (§2.14), field for field. */
export const serviceAccountSchema = z
  .object({
    id: uuid,
    teamId: uuid,
    teamSlug: z.string(),
    name: z.string().meta({ pattern: SERVICE_ACCOUNT_NAME.source }),
    description: z.string(),
    role: z.enum(SERVICE_ACCOUNT_ROLES),
    enabled: z.boolean().meta({ description: 'When false, the account\'s keys fail from their next request.' }),
    activeKeyCount: z.number().int(),
    lastUsedAt: timestamp.nullable(),
    createdByName: z.string().nullable(),
    revision: z.number().int(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'ServiceAccount' });

export type ServiceAccountJson = z.infer<typeof serviceAccountSchema>;

export function presentServiceAccount(account: ServiceAccount): ServiceAccountJson {
  return {
    id: account.id,
    teamId: account.teamId,
    teamSlug: account.teamSlug,
    name: account.name,
    description: account.description,
    role: teamRoleName(account.role) === 'editor' ? 'editor' : 'member',
    enabled: account.enabled,
    activeKeyCount: account.activeKeyCount,
    lastUsedAt: orNull(account.lastUsedAt),
    createdByName: orNull(account.createdByName),
    revision: toNumber(account.revision),
    createdAt: account.createdAt ?? '',
    updatedAt: account.updatedAt ?? '',
  };
}
