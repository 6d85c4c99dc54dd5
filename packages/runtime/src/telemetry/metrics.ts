import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { withTimeout } from '../lifecycle/timeout';
import { RequestDurationHistogram } from './request-duration';

/**
 * One Prometheus registry per process. Metric names are prefixed `platform_`; labels never carry ids,
 * tokens or anything unbounded.
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry, prefix: 'platform_' });

/** Labels: method, route, status (RequestDurationHistogram: one observation per HTTP request, kept cheap). */
export const httpRequestDuration = new RequestDurationHistogram({
  name: 'platform_http_request_duration_seconds',
  help: 'HTTP requests served by the edge, by route template, method and status.',
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});

export const grpcServerDuration = new Histogram({
  name: 'platform_grpc_server_duration_seconds',
  help: 'gRPC calls handled, by service, method and status code.',
  labelNames: ['service', 'method', 'code'] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});

export const grpcClientDuration = new Histogram({
  name: 'platform_grpc_client_duration_seconds',
  help: 'gRPC calls made, by service, method and status code.',
  labelNames: ['service', 'method', 'code'] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});

export const outboxPublished = new Counter({
  name: 'platform_outbox_published_total',
  help: 'Events the outbox relay published, by schema and topic.',
  labelNames: ['schema', 'topic'] as const,
  registers: [metricsRegistry],
});

export const outboxPublishFailures = new Counter({
  name: 'platform_outbox_publish_failures_total',
  help: 'Outbox relay batches that failed to publish, by schema.',
  labelNames: ['schema'] as const,
  registers: [metricsRegistry],
});

export const eventsConsumed = new Counter({
  name: 'platform_events_consumed_total',
  help: 'Events consumed, by consumer, topic and result (processed, duplicate, failed).',
  labelNames: ['consumer', 'topic', 'result'] as const,
  registers: [metricsRegistry],
});

export const eventsParked = new Counter({
  name: 'platform_events_parked_total',
  help: "Events set aside by their consumer, by consumer and topic: the handler kept failing for a reason other than a dependency down, so the event waits in the consumer's parked_events for an operator (docs/operations.md, Parked events).",
  labelNames: ['consumer', 'topic'] as const,
  registers: [metricsRegistry],
});

export const callRecordsDropped = new Counter({
  name: 'platform_call_records_dropped_total',
  help: 'MCP call records the edge dropped before publishing them, by reason (buffer_full, shutdown, invalid, no_bus).',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});

/**
 * Labels: method (a known MCP method or `other`), outcome, error_class (gateway/src/mcp/call-metrics.ts bounds them).
 * Its `_count` is the calls' counter. Timed as the call record's latency: from the POST's start, once its Origin and
 * token were checked, to the answer, upstream time included.
 */
export const mcpCallDuration = new RequestDurationHistogram({
  name: 'platform_mcp_call_duration_seconds',
  help: 'Requests served through MCP gateways (/mcp/{slug}), one per call record, by MCP method, outcome and error class: seconds from the POST (its Origin and token checked) to the answer, upstream time included.',
  labelNames: ['method', 'outcome', 'error_class'],
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [metricsRegistry],
});

export const sharedGenerationFollowed = new Gauge({
  name: 'platform_shared_generation_followed',
  help: 'Per shared generation (auth, catalog): 1 while this process follows it in memory (its subscription live and delivering), 0 while it reads it from the cache at every request.',
  labelNames: ['generation'] as const,
  registers: [metricsRegistry],
});

export const sharedGenerationLapses = new Counter({
  name: 'platform_shared_generation_lapses_total',
  help: 'Times this process stopped trusting a shared generation\'s subscription, by generation and reason (interrupted: the connection failed; stalled: a probe came back late).',
  labelNames: ['generation', 'reason'] as const,
  registers: [metricsRegistry],
});

export const sharedGenerationMoveFailures = new Counter({
  name: 'platform_shared_generation_move_failures_total',
  help: 'Committed changes whose shared generation (auth, catalog) could not be moved in the cache: other replicas see them only when what they remember expires.',
  labelNames: ['generation'] as const,
  registers: [metricsRegistry],
});

export const eventHandlerConsecutiveFailures = new Gauge({
  name: 'platform_event_handler_consecutive_failures',
  help: 'Per consumer group, topic and partition: how many times in a row the message at its head failed (0 once handled; absent before any failure). One that keeps rising is a consumer stuck on one message: a dependency down, or a message it cannot handle (docs/operations.md).',
  labelNames: ['group', 'topic', 'partition'] as const,
  registers: [metricsRegistry],
});

/** What a schema's outbox has not published yet. */
export interface OutboxBacklog {
  unsent: number;
  oldestAgeSeconds: number;
  /** Events the schema's consumers set aside and nobody replayed or discarded yet (outbox/parked-events.ts). */
  parked: number;
}

/** Per schema, the running relays' readers (two relays of one schema may run in one process: tests, say); any one reads. */
const outboxBacklogReaders = new Map<string, Set<() => Promise<OutboxBacklog>>>();
let backlogRead: { at: number; settled: boolean; result: Promise<Map<string, OutboxBacklog | null>> } | undefined;

/**
 * One read of every registered outbox per scrape, shared by the two gauges below: reused within a second, and while
 * it is still running (a scrape that gave up on a slow database does not start more queries behind it).
 */
function readOutboxBacklogs(): Promise<Map<string, OutboxBacklog | null>> {
  if (backlogRead && (!backlogRead.settled || Date.now() - backlogRead.at < 1_000)) return backlogRead.result;
  const entries = [...outboxBacklogReaders].map(async ([schema, readers]) => {
    const [read] = readers;
    return [schema, read ? await read().catch(() => null) : null] as const;
  });
  const current = { at: Date.now(), settled: false, result: Promise.all(entries).then((read) => new Map(read)) };
  void current.result.finally(() => (current.settled = true));
  backlogRead = current;
  return current.result;
}

/** Sets `gauge` per schema from the backlogs; a schema whose read failed (database down) has no series this scrape. */
async function collectBacklog(gauge: Gauge<'schema'>, value: (backlog: OutboxBacklog) => number): Promise<void> {
  gauge.reset();
  // A scrape must answer: a read the database does not answer within 2 s (as readiness checks) gives no series.
  const backlogs = await withTimeout(readOutboxBacklogs(), 2_000, () => new Error('outbox backlog read timed out')).catch(() => new Map<string, OutboxBacklog | null>());
  for (const [schema, backlog] of backlogs) if (backlog) gauge.set({ schema }, value(backlog));
}

/**
 * Lets the outbox gauges read a schema's backlog at scrape time (the outbox relay registers while it runs). Every
 * replica reads the same table, so across replicas take the max. Returns the unregistration.
 */
export function registerOutboxBacklog(schema: string, read: () => Promise<OutboxBacklog>): () => void {
  let readers = outboxBacklogReaders.get(schema);
  if (!readers) outboxBacklogReaders.set(schema, (readers = new Set()));
  readers.add(read);
  backlogRead = undefined;
  return () => {
    if (!readers.delete(read)) return;
    if (readers.size === 0) outboxBacklogReaders.delete(schema);
    backlogRead = undefined;
  };
}

export const outboxUnsent = new Gauge({
  name: 'platform_outbox_unsent',
  help: 'Events written to a schema\'s outbox and not yet published to the bus, read at scrape time.',
  labelNames: ['schema'] as const,
  registers: [metricsRegistry],
  async collect() {
    await collectBacklog(this, (backlog) => backlog.unsent);
  },
});

export const eventsParkedNow = new Gauge({
  name: 'platform_events_parked_now',
  help: 'Events a schema\'s consumers set aside that wait to be replayed or discarded, read at scrape time.',
  labelNames: ['schema'] as const,
  registers: [metricsRegistry],
  async collect() {
    await collectBacklog(this, (backlog) => backlog.parked);
  },
});

export const outboxOldestUnsentAge = new Gauge({
  name: 'platform_outbox_oldest_unsent_age_seconds',
  help: 'Age of the oldest event in a schema\'s outbox not yet published (0 when none): how late its audit and domain events are.',
  labelNames: ['schema'] as const,
  registers: [metricsRegistry],
  async collect() {
    await collectBacklog(this, (backlog) => backlog.oldestAgeSeconds);
  },
});
