import { TOPICS, type EventConsumer, type Logger } from '@platform/runtime';
import { storeAuditEvent } from '../domain/audit';

/**
 * Stores every service's audit events (topic `audit.v1`) in `identity.audit_entries`. The runtime runs the
 * handler once per event id, in the transaction that marks the event processed.
 */
export function auditStoreConsumer(deps: { logger: Logger }): EventConsumer {
  return {
    name: 'identity.audit-store',
    topics: [TOPICS.audit],
    handle: (event, tx) => storeAuditEvent(tx, event, deps.logger),
  };
}
