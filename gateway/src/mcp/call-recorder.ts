import {
  backoffMs,
  callRecordsDropped,
  EVENT_HEADERS,
  injectTraceHeaders,
  LogThrottle,
  TOPICS,
  timeOrderedUuid,
  type BusMessage,
  type DomainEvent,
  type EventBus,
  type Logger,
} from '@platform/runtime';
import { DropOldestBuffer } from './call-buffer';
import type { CallRecorder, McpCallEvent } from './call-record';
import { capUtf8 } from './call-payload';

/**
 * The event type on `mcp-calls.v1`: a batch of call records grouped by what they share (`data.groups`, each a
 * `context` and its `calls`, every call with its own event id). One bus message per batch rather than per call:
 * encoding, sending and consuming a message cost far more than a record (docs/performance.md). Grouping sends the
 * team, gateway, server, principal and client of a busy session once per batch instead of once per call, so a batch
 * is about a third of the bytes to serialise, compress, send, parse and store. Consumers also accept the earlier
 * `mcp.calls` batches and single `mcp.call` events.
 */
export const CALL_BATCH_EVENT_TYPE = 'mcp.call-batch';

/** What a call carries besides what its batch group shares: the call, its payloads (if captured) capped and flagged when cut. */
export type McpCallBatchCall = Pick<
  McpCallEvent,
  'occurredAt' | 'method' | 'exposedName' | 'outcome' | 'errorClass' | 'latencyMs' | 'requestBytes' | 'responseBytes' | 'requestId' | 'providerSlug'
> & {
  /** The call's own event id: the consumer stores each id once. */
  id: string;
  payloads?: { request: string; response: string; requestTruncated: boolean; responseTruncated: boolean };
};

/** What the calls of one batch group share. */
export type McpCallContext = Pick<McpCallEvent, 'teamId' | 'gateway' | 'server' | 'principal' | 'clientName'>;

/** `data` of an `mcp.call-batch` event. */
export interface McpCallBatchData {
  groups: Array<{ context: McpCallContext; calls: McpCallBatchCall[] }>;
}

export interface CallRecorderOptions {
  /** Absent where the edge runs without a platform (route catalogue, unit setups): records are then dropped, counted. */
  bus?: EventBus | undefined;
  logger: Logger;
  /** Records per published batch (default 500). */
  batchSize?: number;
  /** How long a record may wait for others to share its batch (default 200 ms). */
  lingerMs?: number;
  /** Records held while the bus is slow or down; beyond it the oldest are dropped (default 10,000). */
  maxBuffered?: number;
  /** Estimated bytes held; beyond it the oldest are dropped (default 32 MiB). */
  maxBufferedBytes?: number;
  /** Back-off between attempts while publishing fails (default 100 ms doubling to 10 s). */
  retry?: { initialMs: number; maxMs: number };
  /** How long `flush` keeps trying a failing bus before giving the rest up (default 5 s). */
  flushTimeoutMs?: number;
  /** At most one "records dropped" warning per this many ms (default 5 s). */
  dropWarningEveryMs?: number;
}

interface PendingCall {
  id: string;
  call: McpCallEvent;
  /** The call's payloads cut to size when it was recorded (the uncut ones are not kept). */
  payloads: McpCallBatchCall['payloads'];
  /** Estimated bytes on the wire: bounds the buffer and keeps a batch well under Kafka's 1 MB message limit. */
  size: number;
  /** The serialised context and call, made off the request path when first published (kept for retries). */
  context?: string;
  value?: string;
}

// A call without payloads is about 300 bytes of JSON, its share of the group's context less.
const RECORD_OVERHEAD_BYTES = 512;
// Estimated bytes per batch; JSON escaping of payloads can double them, still under Kafka's default 1 MB.
const MAX_BATCH_BYTES = 256 * 1024;

function capPayloads(payloads: NonNullable<McpCallEvent['payloads']>): NonNullable<McpCallBatchCall['payloads']> {
  const request = capUtf8(payloads.request);
  const response = capUtf8(payloads.response);
  return {
    request: request.text,
    response: response.text,
    requestTruncated: request.truncated || payloads.requestTruncated === true,
    responseTruncated: response.truncated || payloads.responseTruncated === true,
  };
}

function pendingCall(call: McpCallEvent): PendingCall {
  if (!call.payloads) return { id: timeOrderedUuid(), call, payloads: undefined, size: RECORD_OVERHEAD_BYTES };
  // Keep only the cut payloads: the uncut ones may be large and the buffer holds records for a while.
  const { payloads: uncut, ...rest } = call;
  const payloads = capPayloads(uncut);
  return { id: timeOrderedUuid(), call: rest, payloads, size: RECORD_OVERHEAD_BYTES + payloads.request.length + payloads.response.length };
}

/** Contexts already serialised, by their principal object (call-context.ts hands out the same objects per session). */
const contextJsons = new WeakMap<object, Array<McpCallContext & { json: string }>>();
/** Contexts remembered per principal object: a person's sessions through a gateway's few servers. */
const CONTEXTS_PER_PRINCIPAL = 8;

/**
 * The JSON of what a call's group shares (also the key it is grouped by). Serialised once while the data plane passes
 * the same gateway, server and principal objects (it never changes them); records built afresh are serialised each time.
 */
function contextJson({ call }: PendingCall): string {
  let known = contextJsons.get(call.principal);
  const same = known?.find((c) => c.gateway === call.gateway && c.server === call.server && c.teamId === call.teamId && c.clientName === call.clientName);
  if (same) return same.json;
  const context: McpCallContext = { teamId: call.teamId, gateway: call.gateway, server: call.server, principal: call.principal, clientName: call.clientName };
  const json = JSON.stringify(context);
  if (!known) contextJsons.set(call.principal, (known = []));
  if (known.length >= CONTEXTS_PER_PRINCIPAL) known.shift();
  known.push({ ...context, json });
  return json;
}

/** The JSON of the call itself, without what its group shares. */
function callJson({ id, call, payloads }: PendingCall): string {
  const item: McpCallBatchCall = {
    id,
    occurredAt: call.occurredAt,
    method: call.method,
    exposedName: call.exposedName,
    outcome: call.outcome,
    errorClass: call.errorClass,
    latencyMs: call.latencyMs,
    requestBytes: call.requestBytes,
    responseBytes: call.responseBytes,
    requestId: call.requestId,
    providerSlug: call.providerSlug,
    payloads,
  };
  return JSON.stringify(item);
}

/** Settles like `promise`, or rejects once `deadline` (epoch ms) passes first. */
function beforeDeadline<T>(promise: Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('deadline passed')), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/** One bus message for a batch: an event envelope whose data is `{groups: [{context, calls}]}` (McpCallBatchData). */
function batchMessage(groups: Map<string, string[]>): BusMessage {
  const id = timeOrderedUuid();
  const envelope: Omit<DomainEvent<unknown>, 'data'> = { id, type: CALL_BATCH_EVENT_TYPE, source: 'gateway', occurredAt: new Date().toISOString() };
  const data = [...groups].map(([context, calls]) => `{"context":${context},"calls":[${calls.join(',')}]}`).join(',');
  return {
    topic: TOPICS.calls,
    // Unkeyed: batches spread over the partitions; a record's order is its occurredAt, not its position.
    key: null,
    value: `${JSON.stringify(envelope).slice(0, -1)},"data":{"groups":[${data}]}}`,
    headers: { ...injectTraceHeaders(), [EVENT_HEADERS.id]: id, [EVENT_HEADERS.type]: CALL_BATCH_EVENT_TYPE },
  };
}

/**
 * The data plane's call recorder: `record` only appends to a bounded in-memory buffer and returns; batches go
 * to `mcp-calls.v1` off the request path, by size (`batchSize`) or after `lingerMs`. A failing bus is retried
 * with back-off while the buffer keeps the newest records (dropping the oldest, counted in
 * `platform_call_records_dropped_total`). Not a transactional outbox: see docs/architecture.md (Topics).
 *
 * The data plane makes one per edge (`createCallRecorder(deps)` with the EdgeDeps) and flushes it when it closes;
 * the edge's stop hooks (edge-stop.ts) run that close when the platform's gateway module stops.
 */
export function createCallRecorder(options: CallRecorderOptions): CallRecorder {
  const { logger } = options;
  if (!options.bus) return droppingRecorder(logger);
  const bus: EventBus = options.bus;
  const batchSize = options.batchSize ?? 500;
  const lingerMs = options.lingerMs ?? 200;
  const retry = options.retry ?? { initialMs: 100, maxMs: 10_000 };
  const flushTimeoutMs = options.flushTimeoutMs ?? 5_000;
  const dropWarningEveryMs = options.dropWarningEveryMs ?? 5_000;
  const buffer = new DropOldestBuffer<PendingCall>(
    { maxItems: options.maxBuffered ?? 10_000, maxBytes: options.maxBufferedBytes ?? 32 * 1024 * 1024 },
    (call) => call.size,
  );

  let timer: NodeJS.Timeout | null = null;
  let timerIsImmediate = false;
  let draining: Promise<void> | null = null;
  let failures = 0;
  let droppedSinceWarning = 0;
  let lastDropWarning = 0;

  function noteDropped(reason: 'buffer_full' | 'shutdown' | 'invalid' | 'no_bus', count: number): void {
    callRecordsDropped.inc({ reason }, count);
    droppedSinceWarning += count;
    const now = Date.now();
    if (now - lastDropWarning < dropWarningEveryMs) return;
    logger.warn({ dropped: droppedSinceWarning, reason, buffered: buffer.length }, 'MCP call records dropped');
    lastDropWarning = now;
    droppedSinceWarning = 0;
  }

  function arm(ms: number): void {
    disarm();
    timerIsImmediate = ms === 0;
    timer = setTimeout(() => {
      timer = null;
      kick();
    }, ms);
    timer.unref();
  }

  function disarm(): void {
    if (timer) clearTimeout(timer);
    timer = null;
  }

  /** Starts a drain unless one runs (it takes whatever arrives meanwhile). */
  function kick(): void {
    if (draining || buffer.length === 0) return;
    draining = drain().finally(() => {
      draining = null;
      if (failures === 0 && buffer.length > 0) schedule();
    });
  }

  /** Whether a whole batch waits (by count or by estimated bytes). */
  function fullBatchWaiting(): boolean {
    return buffer.length >= batchSize || buffer.bytes >= MAX_BATCH_BYTES;
  }

  /** After a record: publish soon, at once when a batch is full; nothing while a drain or back-off is under way. */
  function schedule(): void {
    if (draining || failures > 0) return;
    if (fullBatchWaiting()) {
      if (!timer || !timerIsImmediate) arm(0);
    } else if (!timer) arm(lingerMs);
  }

  /** The batch's message; a record that cannot be serialised is dropped, never retried. */
  function messagesOf(batch: PendingCall[]): { sendable: PendingCall[]; messages: BusMessage[] } {
    const sendable: PendingCall[] = [];
    const groups = new Map<string, string[]>();
    for (const call of batch) {
      try {
        const context = (call.context ??= contextJson(call));
        const value = (call.value ??= callJson(call));
        const group = groups.get(context);
        if (group) group.push(value);
        else groups.set(context, [value]);
        sendable.push(call);
      } catch (error) {
        noteDropped('invalid', 1);
        logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'MCP call record could not be serialised');
      }
    }
    return { sendable, messages: groups.size > 0 ? [batchMessage(groups)] : [] };
  }

  /**
   * Publishes one batch (its time came), then more only while full ones wait: records that arrived during a publish
   * wait for the linger timer again (as Kafka's linger.ms), or a busy gateway would publish a small batch per round
   * trip. On a failure puts the batch back and arms the back-off.
   */
  async function drain(): Promise<void> {
    do {
      const { sendable: batch, messages } = messagesOf(buffer.take(batchSize, MAX_BATCH_BYTES));
      try {
        await bus.publish(messages);
        failures = 0;
      } catch (error) {
        failures += 1;
        const dropped = buffer.unshift(batch);
        if (dropped > 0) noteDropped('buffer_full', dropped);
        const delay = backoffMs(failures, retry.initialMs, retry.maxMs);
        logger.warn({ err: error, failures, buffered: buffer.length, retryInMs: delay }, 'publishing MCP call records failed; will retry');
        arm(delay);
        return;
      }
    } while (fullBatchWaiting());
  }

  /** Publishes everything buffered, retrying a failing bus until the deadline; what is left then is dropped. */
  async function drainBefore(deadline: number): Promise<void> {
    for (let attempt = 1; buffer.length > 0; attempt += 1) {
      const { sendable: batch, messages } = messagesOf(buffer.take(batchSize, MAX_BATCH_BYTES));
      try {
        await beforeDeadline(bus.publish(messages), deadline);
        failures = 0;
        attempt = 0;
      } catch (error) {
        const dropped = buffer.unshift(batch);
        if (dropped > 0) noteDropped('buffer_full', dropped);
        const remaining = deadline - Date.now();
        if (remaining <= 0) {
          const lost = buffer.clear();
          noteDropped('shutdown', lost);
          logger.error({ err: error, lost }, 'MCP call records could not be published before shutdown');
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(remaining, backoffMs(attempt, retry.initialMs, retry.maxMs))));
      }
    }
  }

  let flushing: Promise<void> | null = null;
  async function flushNow(): Promise<void> {
    const deadline = Date.now() + flushTimeoutMs;
    try {
      while (draining) await beforeDeadline(draining, deadline);
    } catch {
      logger.error({ buffered: buffer.length }, 'MCP call records still being published at shutdown; giving up waiting');
      return;
    }
    disarm();
    draining = drainBefore(deadline).finally(() => {
      draining = null;
      // Either all went out or the rest was given up: records from now on start afresh.
      failures = 0;
      if (buffer.length > 0) schedule();
    });
    await draining;
  }

  return {
    record(call) {
      try {
        const dropped = buffer.push(pendingCall(call));
        if (dropped > 0) noteDropped('buffer_full', dropped);
        schedule();
      } catch (error) {
        // Never the request's problem: count it, and say why without the record (it may hold payloads).
        noteDropped('invalid', 1);
        logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'MCP call record could not be buffered');
      }
    },
    flush() {
      return (flushing ??= flushNow().finally(() => {
        flushing = null;
      }));
    },
  };
}

/** Without a bus there is nowhere to send records: each is counted as dropped (and warned about now and then). */
function droppingRecorder(logger: Logger): CallRecorder {
  const warnings = new LogThrottle(60_000);
  return {
    record() {
      callRecordsDropped.inc({ reason: 'no_bus' });
      if (warnings.pass() !== undefined) logger.warn('MCP call records are dropped: this edge has no event bus');
    },
    flush: () => Promise.resolve(),
  };
}
