import type { ServiceStatus } from '@platform/proto/gen/platform/common/v1/common';
import type { ServiceName } from '../config';
import type { Queryable } from '../db/port';
import rootPackage from '../../../../package.json';

/** The version this build reports (service status, the MCP gateway's serverInfo): PLATFORM_VERSION, else package.json's. */
export const PLATFORM_VERSION = process.env.PLATFORM_VERSION ?? rootPackage.version;
const STARTED_AT = new Date().toISOString();

/**
 * The `GetServiceStatus` RPC every service offers: its name, the build version and the latest of its own
 * migrations applied to its schema (the runtime's `runtime_…` migrations are not the service's version).
 */
export async function readServiceStatus(name: ServiceName, db: Queryable): Promise<ServiceStatus> {
  const { rows } = await db.query<{ id: string }>(`SELECT id FROM ${name}.schema_migrations WHERE id NOT LIKE 'runtime\\_%' ORDER BY id DESC LIMIT 1`);
  return { service: name, version: PLATFORM_VERSION, schemaVersion: rows[0]?.id ?? '', startedAt: STARTED_AT };
}
