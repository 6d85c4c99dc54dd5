import { TOPICS, type EventConsumer, type Logger } from '@platform/runtime';
import { storeCallEvent } from '../domain/call-event';

/**
 * Stores the edge's call records (topic `mcp-calls.v1`) in `catalog.call_records`. The runtime runs the handler
 * once per event id, in the transaction that marks the event processed; the record's unique event id is a second
 * guard against storing one twice.
 */
export function callRecordsConsumer(deps: { logger: Logger }): EventConsumer {
  return {
    name: 'catalog.call-records',
    topics: [TOPICS.calls],
    handle: (event, tx) => storeCallEvent(tx, event, deps.logger),
  };
}
