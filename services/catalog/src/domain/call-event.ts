import { z } from 'zod';
import { isStorableInstant, sliceCodePoints, storableText, type DomainEvent, type Logger, type Transaction } from '@platform/runtime';
import { insertCallRecordsSkippingRefused, type NewCall, type NewCallContext } from '../store/calls-store';

/**
 * The event types on `mcp-calls.v1`: the edge's recorder publishes grouped batches (`mcp.call-batch`: groups of calls
 * that share a team, gateway, server, principal and client, each call with its own event id). Batches of full
 * records (`mcp.calls`, what edges sent before) and single calls (`mcp.call`) are accepted too.
 */
export const CALL_EVENT_TYPE = 'mcp.call';
export const CALL_BATCH_EVENT_TYPE = 'mcp.call-batch';
export const FULL_RECORDS_BATCH_EVENT_TYPE = 'mcp.calls';

export const CALL_OUTCOMES = ['ok', 'error', 'refused', 'timeout', 'upstream_unavailable', 'cancelled'] as const;

/** Payloads beyond this many characters are cut here too (the edge caps each at 16 KiB of UTF-8, never more characters). */
const MAX_PAYLOAD_CHARS = 16 * 1024;
/** Calls per batch, and groups per batch, beyond which a batch is refused as a whole (the edge sends at most 500). */
const MAX_BATCH_ITEMS = 10_000;

/**
 * Free text is kept to a sane length rather than refusing the record over it, and made storable: much of it comes
 * from MCP clients (a tool name, clientInfo.name), and a NUL or an unpaired surrogate would otherwise fail the
 * statement storing the whole batch (see storableText).
 */
const text = (max: number) => z.string().transform((value) => storableText(value, max));
const optionalId = z.union([z.uuid(), z.literal('')]).optional();
const target = z.object({ id: z.uuid(), slug: text(200), name: text(500) });
const byteCount = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const occurredAt = z.iso.datetime({ offset: true }).refine(isStorableInstant, 'must be between the years 0001 and 9999');

/** A captured payload made storable and cut to MAX_PAYLOAD_CHARS characters, flagged when cut here or by the edge. */
function payload(value: string, truncated: boolean): { text: string; truncated: boolean } {
  const whole = storableText(value);
  const text = sliceCodePoints(whole, MAX_PAYLOAD_CHARS);
  return { text, truncated: truncated || text.length < whole.length };
}

/** What the calls of a group share (gateway/src/mcp/call-recorder.ts writes it). Unknown keys are dropped. */
const callContext = z.object({
  teamId: z.uuid(),
  gateway: target,
  server: target.optional(),
  principal: z.object({
    kind: z.enum(['user', 'api_key', 'service_account']),
    userId: optionalId,
    displayName: text(500).optional(),
    email: text(500).optional(),
    apiKeyName: text(200).optional(),
    oauthClientName: text(500).optional(),
    oauthClientVerified: z.boolean().optional(),
    serviceAccountId: optionalId,
    /** The account's team by id (a slug can be renamed or reused); records made before it have only the slug. */
    serviceAccountTeamId: optionalId,
    serviceAccountTeamSlug: text(200).optional(),
  }),
  clientName: text(500),
});

/** What is a call's own. */
const callOwn = z.object({
  occurredAt,
  // Cut like the other texts, never refused: a request with an empty or very long method still gets its record.
  method: text(200),
  exposedName: text(2048),
  outcome: z.enum(CALL_OUTCOMES),
  errorClass: text(200),
  providerSlug: text(200).optional(),
  latencyMs: z.number().min(0).transform((ms) => Math.min(Math.round(ms), 2_147_483_647)),
  requestBytes: byteCount,
  responseBytes: byteCount,
  requestId: text(200),
  payloads: z
    .object({
      request: z.string(),
      response: z.string(),
      requestTruncated: z.boolean().default(false),
      responseTruncated: z.boolean().default(false),
    })
    .optional(),
});

/** A call of a grouped batch: its own part and its event id. */
const groupedCall = callOwn.extend({ id: z.uuid() });
const groupedBatch = z.object({
  groups: z.array(z.object({ context: z.unknown(), calls: z.array(z.unknown()).max(MAX_BATCH_ITEMS) })).max(MAX_BATCH_ITEMS),
});
const fullRecordsBatch = z.object({ calls: z.array(z.object({ id: z.uuid() }).loose()).max(MAX_BATCH_ITEMS) });

/** Records of one or more events, in the shape they are stored in: each call points at the context it shares. */
export class CallRecordsToStore {
  readonly contexts: NewCallContext[] = [];
  readonly calls: NewCall[] = [];

  constructor(private readonly logger: Logger) {}

  /** Adds the calls an event carries, skipping (and logging, never their content) those of another shape. */
  addEvent(event: DomainEvent<unknown>): void {
    if (event.type === CALL_BATCH_EVENT_TYPE) return this.addGroupedBatch(event);
    if (event.type === FULL_RECORDS_BATCH_EVENT_TYPE) return this.addFullRecordsBatch(event);
    if (event.type === CALL_EVENT_TYPE) return this.addFullRecord(event.id, event.data, event.source);
    this.logger.warn({ eventId: event.id, type: event.type, source: event.source }, 'unexpected event on the calls topic skipped');
  }

  private addGroupedBatch(event: DomainEvent<unknown>): void {
    const batch = groupedBatch.safeParse(event.data);
    if (!batch.success) return this.skipped(event.id, event.source, 'call batch', batch.error);
    for (const group of batch.data.groups) {
      const context = callContext.safeParse(group.context);
      if (!context.success) {
        this.skipped(event.id, event.source, 'call group', context.error, { calls: group.calls.length });
        continue;
      }
      const index = this.contexts.push(storedContext(context.data)) - 1;
      for (const item of group.calls) {
        const call = groupedCall.safeParse(item);
        if (call.success) this.calls.push(storedCall(call.data.id, index, call.data));
        else this.skipped(event.id, event.source, 'call record', call.error);
      }
    }
  }

  private addFullRecordsBatch(event: DomainEvent<unknown>): void {
    const batch = fullRecordsBatch.safeParse(event.data);
    if (!batch.success) return this.skipped(event.id, event.source, 'call batch', batch.error);
    for (const { id, ...data } of batch.data.calls) this.addFullRecord(id, data, event.source);
  }

  /** A call with everything in one object (`mcp.call`, or an item of `mcp.calls`). */
  private addFullRecord(id: string, data: unknown, source: string): void {
    const context = callContext.safeParse(data);
    const call = callOwn.safeParse(data);
    if (!context.success) return this.skipped(id, source, 'call record', context.error);
    if (!call.success) return this.skipped(id, source, 'call record', call.error);
    this.calls.push(storedCall(id, this.contexts.push(storedContext(context.data)) - 1, call.data));
  }

  private skipped(eventId: string, source: string, what: 'call batch' | 'call group' | 'call record', error: z.ZodError, extra: { calls?: number } = {}): void {
    const fields = error.issues.map((issue) => issue.path.join('.'));
    this.logger.warn({ eventId, source, fields, ...extra }, `${what} in an unexpected shape skipped`);
  }
}

function storedContext(context: z.infer<typeof callContext>): NewCallContext {
  return {
    teamId: context.teamId,
    gateway: context.gateway,
    server: context.server ?? null,
    principal: context.principal,
    principalUserId: context.principal.userId || null,
    clientName: context.clientName,
  };
}

function storedCall(eventId: string, context: number, call: z.infer<typeof callOwn>): NewCall {
  const request = call.payloads && payload(call.payloads.request, call.payloads.requestTruncated);
  const response = call.payloads && payload(call.payloads.response, call.payloads.responseTruncated);
  return {
    eventId,
    context,
    occurredAt: call.occurredAt,
    method: call.method,
    exposedName: call.exposedName,
    outcome: call.outcome,
    errorClass: call.errorClass,
    providerSlug: call.providerSlug ?? '',
    latencyMs: call.latencyMs,
    requestBytes: call.requestBytes,
    responseBytes: call.responseBytes,
    requestId: call.requestId,
    payloads:
      request && response
        ? { request: request.text, response: response.text, requestTruncated: request.truncated, responseTruncated: response.truncated }
        : null,
  };
}

/**
 * Stores call records (the consumer runs this once per event id, in its transaction) in as few statements as the
 * batch needs; each record's own event id is unique in the table, so a call published again in another batch is
 * stored once. Records of another shape, and records the database refuses for their data, are skipped rather than
 * retried forever (insertCallRecordsSkippingRefused).
 */
export async function storeCallEvents(tx: Transaction, events: readonly DomainEvent<unknown>[], logger: Logger): Promise<void> {
  const records = new CallRecordsToStore(logger);
  for (const event of events) records.addEvent(event);
  if (records.calls.length === 0) return;
  await insertCallRecordsSkippingRefused(tx, records, (call, sqlstate) =>
    // The event id and the error's code only: the record (and the database's message about it) may hold payloads.
    logger.warn({ eventId: call.eventId, sqlstate }, 'call record refused by the database for its data; skipped'),
  );
}
