import { z } from 'zod';
import type { Maintenance, PersonRef } from '@platform/proto/gen/platform/identity/v1/identity';
import { orNull, timestamp, toNumber, uuid } from './common';

const personRefSchema = z.object({ id: uuid, displayName: z.string(), email: z.string() }).meta({ id: 'MaintenancePerson' });

export const maintenanceSchema = z
  .object({
    enabled: z.boolean(),
    reason: z.string().describe('Shown to users while maintenance is on; empty when off'),
    plannedEndAt: timestamp.nullable().describe('Informational only: maintenance ends when an admin turns it off'),
    startedAt: timestamp.nullable(),
    startedBy: personRefSchema.nullable(),
    updatedBy: personRefSchema.nullable(),
    updatedAt: timestamp,
    revision: z.number().int(),
  })
  .meta({ id: 'Maintenance' });

export type MaintenanceJson = z.infer<typeof maintenanceSchema>;

const personRef = (person: PersonRef | undefined) =>
  person && person.id ? { id: person.id, displayName: person.displayName, email: person.email } : null;

export function presentMaintenance(maintenance: Maintenance): MaintenanceJson {
  return {
    enabled: maintenance.enabled,
    reason: maintenance.reason,
    plannedEndAt: orNull(maintenance.plannedEndAt),
    startedAt: orNull(maintenance.startedAt),
    startedBy: personRef(maintenance.startedBy),
    updatedBy: personRef(maintenance.updatedBy),
    updatedAt: maintenance.updatedAt ?? '',
    revision: toNumber(maintenance.revision),
  };
}
