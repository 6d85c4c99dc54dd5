import { z } from 'zod';
import type { Person } from '@platform/proto/gen/platform/identity/v1/identity';
import { platformRoleName, PLATFORM_ROLES } from '../auth/roles';
import { orNull, timestamp, toNumber, uuid } from './common';

export const personSchema = z
  .object({
    id: uuid,
    email: z.string(),
    displayName: z.string(),
    status: z.enum(['active', 'suspended']),
    platformRole: z.enum(PLATFORM_ROLES).nullable(),
    lastSignInAt: timestamp.nullable(),
    revision: z.number().int(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Person' });

export type PersonJson = z.infer<typeof personSchema>;

export function presentPerson(person: Person): PersonJson {
  return {
    id: person.id,
    email: person.email,
    displayName: person.displayName,
    status: person.status as PersonJson['status'],
    platformRole: platformRoleName(person.platformRole),
    lastSignInAt: orNull(person.lastSignInAt),
    revision: toNumber(person.revision),
    createdAt: person.createdAt ?? '',
    updatedAt: person.updatedAt ?? '',
  };
}
