import { z } from 'zod';
import type { DomainEvent, Logger, Transaction } from '@platform/runtime';
import { insertCallRecords, type NewCallRecord } from '../store/calls-store';

/**
 * The event types on `mcp-calls.v1`: the edge's recorder publishes batches (`mcp.calls`, each item with its own event
 * id); a single call (`mcp.call`) is accepted too.
 */
export const CALL_EVENT_TYPE = 'mcp.call';
export const CALL_BATCH_EVENT_TYPE = 'mcp.calls';

export const CALL_OUTCOMES = ['ok', 'error', 'refused', 'timeout', 'upstream_unavailable', 'cancelled'] as const;

/** Payloads beyond this many characters are cut here too (the edge caps each at 16 KiB of UTF-8, never more characters). */
const MAX_PAYLOAD_CHARS = 16 * 1024;

// Free text is kept to a sane length rather than refusing the record over it.
const text = (max: number) => z.string().transform((value) => value.slice(0, max));
const optionalId = z.union([z.uuid(), z.literal('')]).optional();
const target = z.object({ id: z.uuid(), slug: text(200), name: text(500) });
const payload = (value: string, truncated: boolean) =>
  value.length > MAX_PAYLOAD_CHARS ? { text: value.slice(0, MAX_PAYLOAD_CHARS), truncated: true } : { text: value, truncated };

/** What a `mcp.call` event must carry to be stored (gateway/src/mcp/call-recorder.ts writes it). Unknown keys are dropped. */
const callEventData = z.object({
  teamId: z.uuid(),
  occurredAt: z.iso.datetime({ offset: true }),
  method: z.string().min(1).max(200),
  exposedName: text(2048),
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
    serviceAccountTeamSlug: text(200).optional(),
  }),
  clientName: text(500),
  outcome: z.enum(CALL_OUTCOMES),
  errorClass: text(200),
  providerSlug: text(200).optional(),
  latencyMs: z.number().min(0).transform((ms) => Math.min(Math.round(ms), 2_147_483_647)),
  requestBytes: z.number().int().min(0),
  responseBytes: z.number().int().min(0),
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

const batchData = z.object({ calls: z.array(z.object({ id: z.uuid() }).loose()).max(10_000) });

/** The calls an event carries, each with its own event id: one for `mcp.call`, the items of a `mcp.calls` batch. */
function callsOf(event: DomainEvent<unknown>, logger: Logger): Array<{ id: string; data: unknown }> {
  if (event.type === CALL_EVENT_TYPE) return [{ id: event.id, data: event.data }];
  if (event.type === CALL_BATCH_EVENT_TYPE) {
    const parsed = batchData.safeParse(event.data);
    if (parsed.success) return parsed.data.calls.map(({ id, ...data }) => ({ id, data }));
    logger.warn({ eventId: event.id, source: event.source, fields: parsed.error.issues.map((issue) => issue.path.join('.')) }, 'call batch in an unexpected shape skipped');
    return [];
  }
  logger.warn({ eventId: event.id, type: event.type, source: event.source }, 'unexpected event on the calls topic skipped');
  return [];
}

/**
 * The stored form of one call, or null (logged, never its content: it may hold payloads) when it is in another
 * shape; such calls are skipped rather than retried forever.
 */
function callRecordOf(call: { id: string; data: unknown }, source: string, logger: Logger): NewCallRecord | null {
  const parsed = callEventData.safeParse(call.data);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((issue) => issue.path.join('.'));
    logger.warn({ eventId: call.id, source, fields }, 'call record in an unexpected shape skipped');
    return null;
  }
  const data = parsed.data;
  const request = data.payloads && payload(data.payloads.request, data.payloads.requestTruncated);
  const response = data.payloads && payload(data.payloads.response, data.payloads.responseTruncated);
  return {
    eventId: call.id,
    teamId: data.teamId,
    occurredAt: data.occurredAt,
    method: data.method,
    exposedName: data.exposedName,
    gateway: data.gateway,
    server: data.server ?? null,
    principal: data.principal,
    principalUserId: data.principal.userId || null,
    clientName: data.clientName,
    outcome: data.outcome,
    errorClass: data.errorClass,
    providerSlug: data.providerSlug ?? '',
    latencyMs: data.latencyMs,
    requestBytes: data.requestBytes,
    responseBytes: data.responseBytes,
    requestId: data.requestId,
    payloads:
      request && response
        ? { request: request.text, response: response.text, requestTruncated: request.truncated, responseTruncated: response.truncated }
        : null,
  };
}

/**
 * Stores call records (the consumer runs this once per event id, in its transaction) in one statement; each record's
 * own event id is unique in the table, so a call published again in another batch is stored once.
 */
export async function storeCallEvents(tx: Transaction, events: readonly DomainEvent<unknown>[], logger: Logger): Promise<void> {
  const records = events
    .flatMap((event) => callsOf(event, logger).map((call) => callRecordOf(call, event.source, logger)))
    .filter((record): record is NewCallRecord => record !== null);
  if (records.length > 0) await insertCallRecords(tx, records);
}
