import { TOPICS, type EventConsumer, type Logger } from '@platform/runtime';
import { storeAuditEvents } from '../domain/audit';

/**
 * Stores every service's audit events (topic `audit.v1`) in `identity.audit_entries`. The runtime hands over
 * each event once, in the transaction that marks it processed; up to 200 events share one transaction and one
 * insert, in order.
 */
export function auditStoreConsumer(deps: { logger: Logger }): EventConsumer {
  return {
    name: 'identity.audit-store',
    topics: [TOPICS.audit],
    handle: (event, tx) => storeAuditEvents(tx, [event], deps.logger),
    batch: {
      maxBatch: 200,
      handle: (events, tx) => storeAuditEvents(tx, events, deps.logger),
    },
  };
}
