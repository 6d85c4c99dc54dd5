import { TOPICS, type EventConsumer, type Logger } from '@platform/runtime';
import { storeCallEvents } from '../domain/call-event';

/**
 * Stores the edge's call records (topic `mcp-calls.v1`, batches of up to 500 calls per event) in
 * `catalog.call_records`, two events (up to 1,000 records) per transaction: the runtime hands over only events not
 * processed before, in the transaction that marks them processed; each record's unique event id is a second guard
 * against storing one twice. (One transaction per record could not keep up with a busy gateway:
 * docs/performance.md.) Checking and storing 1,000 records holds the event loop a few milliseconds; larger
 * transactions would save little and, in `--target=all`, stall the data plane beside it while a backlog drains.
 * A record the database refuses for its data is skipped alone and logged by its event id (storeCallEvents); any other
 * failure rolls the transaction back and the bus delivers its events again, until the database takes them.
 */
export function callRecordsConsumer(deps: { logger: Logger }): EventConsumer {
  return {
    name: 'catalog.call-records',
    topics: [TOPICS.calls],
    handle: (event, tx) => storeCallEvents(tx, [event], deps.logger),
    // Records may wait half a second for others: one fetch and offset commit then serve a few batches.
    batch: { maxBatch: 2, gatherMs: 500, handle: (events, tx) => storeCallEvents(tx, events, deps.logger) },
  };
}
