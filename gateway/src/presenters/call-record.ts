import { z } from 'zod';
import type { CallRecord, CallTarget } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { orNull, timestamp, toNumber, uuid } from './common';

export const CALL_OUTCOMES = ['ok', 'error', 'refused', 'timeout', 'upstream_unavailable', 'cancelled'] as const;

const target = (what: string) =>
  z
    .object({
      id: uuid,
      slug: z.string().meta({ description: `The ${what}'s slug at the time of the call.` }),
      name: z.string().meta({ description: `The ${what}'s name at the time of the call.` }),
      exists: z.boolean().meta({ description: `Whether the ${what} still exists.` }),
    })
    .meta({ id: `Call${what[0]!.toUpperCase()}${what.slice(1)}` });

/** A call record (spec §2.9) as lists show it. */
export const callRecordSchema = z
  .object({
    id: z.number().int().min(1).meta({ format: 'int64', example: 42 }),
    occurredAt: timestamp,
    method: z.string().meta({ description: 'The MCP method, for example `tools/call`.', example: 'tools/call' }),
    exposedName: z.string().meta({ description: 'The tool or prompt name the client used, or the resource URI; empty for methods without one.' }),
    gateway: target('gateway'),
    server: target('server').nullable().meta({ description: 'Null when the request never reached an upstream server.' }),
    principal: z
      .object({
        kind: z.enum(['user', 'api_key', 'service_account']),
        userId: z.string().nullable(),
        displayName: z.string().nullable(),
        email: z.string().nullable(),
        apiKeyName: z.string().nullable(),
        oauthClientName: z.string().nullable().meta({ description: 'The OAuth client the person connected with.' }),
        oauthClientVerified: z.boolean(),
        serviceAccountId: z.string().nullable(),
        serviceAccountTeamSlug: z.string().nullable(),
        serviceAccountExists: z.boolean().meta({ description: 'Whether the service account still exists (false for other kinds).' }),
      })
      .meta({ id: 'CallPrincipal' }),
    clientName: z.string().meta({ description: "The MCP client's name from its `initialize`." }),
    outcome: z.enum(CALL_OUTCOMES),
    errorClass: z.string().meta({
      description:
        'Empty when ok; else why (docs/gateway.md, Errors): for example `not_exposed` (an unknown, new or changed capability), ' +
        '`method_not_found`, `timeout`, `connection_refused`, `upstream_unauthorized`, `protocol_error`, `upstream_error`, `tool_error`.',
    }),
    providerSlug: z.string().nullable().meta({ description: "The auth provider whose token the upstream call carried; null when none." }),
    latencyMs: z.number().int(),
    requestBytes: z.number().int(),
    responseBytes: z.number().int(),
    requestId: z.string(),
    captured: z.boolean().meta({ description: 'Whether payloads were captured (the server\'s `capturePayloads`); read them on the single call.' }),
  })
  .meta({ id: 'CallRecord' });

/** One call: the record plus its payloads (null unless captured), each capped at 16 KiB and flagged when cut. */
export const callRecordDetailSchema = callRecordSchema
  .extend({
    payloads: z
      .object({
        request: z.string(),
        response: z.string(),
        requestTruncated: z.boolean(),
        responseTruncated: z.boolean(),
      })
      .nullable(),
  })
  .meta({ id: 'CallRecordDetail' });

export type CallRecordJson = z.infer<typeof callRecordSchema>;
export type CallRecordDetailJson = z.infer<typeof callRecordDetailSchema>;

const presentTarget = (value: CallTarget) => ({ id: value.id, slug: value.slug, name: value.name, exists: value.exists });

export function presentCallRecord(call: CallRecord): CallRecordJson {
  const principal = call.principal;
  const kind = principal?.kind === 'api_key' || principal?.kind === 'service_account' ? principal.kind : 'user';
  return {
    id: toNumber(call.id),
    occurredAt: call.occurredAt ?? '',
    method: call.method,
    exposedName: call.exposedName,
    gateway: presentTarget(call.gateway ?? { id: '', slug: '', name: '', exists: false }),
    server: call.server ? presentTarget(call.server) : null,
    principal: {
      kind,
      userId: orNull(principal?.userId),
      displayName: orNull(principal?.displayName),
      email: orNull(principal?.email),
      apiKeyName: orNull(principal?.apiKeyName),
      oauthClientName: orNull(principal?.oauthClientName),
      oauthClientVerified: principal?.oauthClientVerified ?? false,
      serviceAccountId: orNull(principal?.serviceAccountId),
      serviceAccountTeamSlug: orNull(principal?.serviceAccountTeamSlug),
      serviceAccountExists: principal?.serviceAccountExists ?? false,
    },
    clientName: call.clientName,
    outcome: (CALL_OUTCOMES as readonly string[]).includes(call.outcome) ? (call.outcome as CallRecordJson['outcome']) : 'error',
    errorClass: call.errorClass,
    providerSlug: orNull(call.providerSlug),
    latencyMs: call.latencyMs,
    requestBytes: toNumber(call.requestBytes),
    responseBytes: toNumber(call.responseBytes),
    requestId: call.requestId,
    captured: call.captured,
  };
}

export function presentCallRecordDetail(call: CallRecord): CallRecordDetailJson {
  return {
    ...presentCallRecord(call),
    payloads: call.captured
      ? {
          request: call.requestPayload,
          response: call.responsePayload,
          requestTruncated: call.requestTruncated,
          responseTruncated: call.responseTruncated,
        }
      : null,
  };
}
