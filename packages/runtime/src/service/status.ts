import type { ServiceStatus } from '@platform/proto/gen/platform/common/v1/common';
import type { ServiceName } from '../config';
import type { Queryable } from '../db/port';

const VERSION = process.env.PLATFORM_VERSION ?? (require('../../../../package.json') as { version: string }).version;
const STARTED_AT = new Date().toISOString();

/**
 * The `GetServiceStatus` RPC every service offers: its name, the build version and the latest migration
 * applied to its schema.
 */
export async function readServiceStatus(name: ServiceName, db: Queryable): Promise<ServiceStatus> {
  const { rows } = await db.query<{ id: string }>(`SELECT id FROM ${name}.schema_migrations ORDER BY id DESC LIMIT 1`);
  return { service: name, version: VERSION, schemaVersion: rows[0]?.id ?? '', startedAt: STARTED_AT };
}
