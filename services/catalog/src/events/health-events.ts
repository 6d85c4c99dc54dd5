import { TOPICS, writeEvent, type Transaction } from '@platform/runtime';
import { SCHEMA } from '../deps';
import type { RecordedHealth } from '../store/health-store';

/** Health transitions on `catalog.v1` (notification destinations subscribe to `server.unhealthy`, spec §6.2). */
export type HealthEvent = 'server.unhealthy' | 'server.healthy';

export interface HealthEventData {
  serverId: string;
  teamId: string;
  slug: string;
  name: string;
  /** The class of the failure for `server.unhealthy`; null for `server.healthy`. */
  errorClass: string | null;
  statusSince: string;
}

/** Written in the transaction that stores the transition; keyed by server, so one server's events stay in order. */
export async function writeHealthEvent(tx: Transaction, type: HealthEvent, serverId: string, health: RecordedHealth, errorClass: string | null): Promise<void> {
  await writeEvent<HealthEventData>(tx, SCHEMA, {
    topic: TOPICS.catalog,
    type,
    key: serverId,
    data: { serverId, teamId: health.teamId, slug: health.slug, name: health.name, errorClass, statusSince: health.statusSince.toISOString() },
    source: SCHEMA,
  });
}
