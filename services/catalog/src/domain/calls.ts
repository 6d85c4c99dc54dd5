import type {
  CallRecord,
  GetCallRequest,
  ListCallsRequest,
  ListCallsResponse,
} from '@platform/proto/gen/platform/catalog/v1/catalog';
import { AppError, decodeCursor, encodeCursor, isCursorTimestamp, isStorableInstant, type FieldError } from '@platform/runtime';
import type { CatalogDeps } from '../deps';
import { findCallRecord, listCallRecords, type CallFilter, type CallRecordRow } from '../store/calls-store';
import { iso } from '../store/mappers';
import { CALL_OUTCOMES } from './call-event';
import { existingServiceAccounts, type ServiceAccountRef } from './call-principals';
import { UUID } from './gateway-rules';
import { pageLimit } from './paging';

const INT64_MAX = 9223372036854775807n;
const MAX_METHOD = 200;

/** What is wrong with a time bound (the edge checks them too; a bad one must be a 400, never a database error). */
function timeProblem(value: string): string | null {
  if (Number.isNaN(Date.parse(value))) return 'must be an ISO 8601 date-time';
  return isStorableInstant(value) ? null : 'must be between the years 0001 and 9999';
}

/** An int64 id >= 1 as a decimal string, or null. */
function callIdOf(value: string): string | null {
  if (!/^[1-9]\d{0,18}$/.test(value) || BigInt(value) > INT64_MAX) return null;
  return value;
}

/**
 * The cursor holds the last record of the previous page: its exact time (text, microseconds) and id; pages go to
 * older records. The time reaches a statement as a timestamptz, so it must be one PostgreSQL reads (isCursorTimestamp).
 */
const encodeCallCursor = (row: CallRecordRow): string => encodeCursor({ at: row.position, id: row.id });
const decodeCallCursor = (cursor: string): NonNullable<CallFilter['after']> =>
  decodeCursor(cursor, (value) => {
    const { at, id } = (value ?? {}) as { at?: unknown; id?: unknown };
    if (typeof at !== 'string' || !isCursorTimestamp(at) || typeof id !== 'string') return null;
    const callId = callIdOf(id);
    return callId ? { position: at, id: callId } : null;
  });

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * The service account a record names, with its team: by the team id recorded with it; records made before that
 * have only the team's slug at the time of the call (or none: then the record's own team).
 */
function serviceAccountOf(row: CallRecordRow): ServiceAccountRef | null {
  const id = text(row.principal.serviceAccountId);
  if (!id) return null;
  const teamId = text(row.principal.serviceAccountTeamId);
  return teamId ? { id, teamId } : { id, teamRef: text(row.principal.serviceAccountTeamSlug) || row.team_id };
}

function toCallRecord(row: CallRecordRow, serviceAccounts: ReadonlyMap<string, boolean>): CallRecord {
  const principal = row.principal;
  const serviceAccountId = text(principal.serviceAccountId);
  return {
    id: row.id,
    teamId: row.team_id,
    occurredAt: iso(row.occurred_at),
    method: row.method,
    exposedName: row.exposed_name,
    gateway: { id: row.gateway_id, slug: row.gateway_slug, name: row.gateway_name, exists: row.gateway_exists },
    ...(row.server_id ? { server: { id: row.server_id, slug: row.server_slug, name: row.server_name, exists: row.server_exists } } : {}),
    principal: {
      kind: text(principal.kind),
      userId: text(principal.userId),
      displayName: text(principal.displayName),
      email: text(principal.email),
      apiKeyName: text(principal.apiKeyName),
      oauthClientName: text(principal.oauthClientName),
      oauthClientVerified: principal.oauthClientVerified === true,
      serviceAccountId,
      serviceAccountTeamSlug: text(principal.serviceAccountTeamSlug),
      serviceAccountExists: serviceAccountId ? (serviceAccounts.get(serviceAccountId) ?? false) : false,
    },
    clientName: row.client_name,
    outcome: row.outcome,
    errorClass: row.error_class,
    providerSlug: row.provider_slug,
    latencyMs: row.latency_ms,
    requestBytes: row.request_bytes,
    responseBytes: row.response_bytes,
    requestId: row.request_id,
    captured: row.captured,
    // Lists leave payloads out (the store does not select them); a single record carries them when captured.
    requestPayload: row.request_payload ?? '',
    responsePayload: row.response_payload ?? '',
    requestTruncated: row.request_truncated,
    responseTruncated: row.response_truncated,
  };
}

/** The filters of a list request, checked; a 400 naming every bad one otherwise. */
function callFilter(request: ListCallsRequest): Omit<CallFilter, 'teamId' | 'limit' | 'after'> {
  const problems: FieldError[] = [];
  const uuidFilter = (field: 'gatewayId' | 'serverId' | 'userId'): string | undefined => {
    const value = request[field];
    if (!value) return undefined;
    if (!UUID.test(value)) problems.push({ field, problem: 'must be a uuid' });
    return value;
  };
  const filter = {
    gatewayId: uuidFilter('gatewayId'),
    serverId: uuidFilter('serverId'),
    userId: uuidFilter('userId'),
    outcome: request.outcome || undefined,
    method: request.method || undefined,
    since: request.since,
    until: request.until,
  };
  if (filter.outcome && !(CALL_OUTCOMES as readonly string[]).includes(filter.outcome)) {
    problems.push({ field: 'outcome', problem: `must be one of ${CALL_OUTCOMES.join(', ')}` });
  }
  if (filter.method && filter.method.length > MAX_METHOD) problems.push({ field: 'method', problem: `must be at most ${MAX_METHOD} characters` });
  // PostgreSQL text cannot hold NUL: comparing with one is an error, and no stored method has one.
  if (filter.method?.includes('\u0000')) problems.push({ field: 'method', problem: 'must not contain the NUL character' });
  for (const field of ['since', 'until'] as const) {
    const problem = filter[field] ? timeProblem(filter[field]) : null;
    if (problem) problems.push({ field, problem });
  }
  if (filter.since && filter.until && new Date(filter.since) > new Date(filter.until)) {
    problems.push({ field: 'since', problem: 'must not be after until' });
  }
  if (problems.length > 0) throw AppError.invalid(`Invalid filters: ${problems.map((p) => p.field).join(', ')}`, problems);
  return Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== undefined));
}

/** A team's call records, newest first (by time, then id), keyset-paged on both. */
export async function listCalls(deps: CatalogDeps, request: ListCallsRequest): Promise<ListCallsResponse> {
  const filter = callFilter(request);
  const limit = pageLimit(request.page);
  const after = request.page?.cursor ? decodeCallCursor(request.page.cursor) : undefined;
  if (!UUID.test(request.teamId)) return { calls: [], page: { nextCursor: '' } };
  const rows = await listCallRecords(deps.db, { ...filter, teamId: request.teamId, limit: limit + 1, ...(after ? { after } : {}) });
  const page = rows.slice(0, limit);
  const serviceAccounts = await existingServiceAccounts(deps, page.map(serviceAccountOf).filter((ref) => ref !== null));
  const nextCursor = rows.length > limit ? encodeCallCursor(page[page.length - 1]!) : '';
  return { calls: page.map((row) => toCallRecord(row, serviceAccounts)), page: { nextCursor } };
}

/** One call of the team, with its payloads when captured; a call not in the team's list is `call_not_found`. */
export async function getCall(deps: CatalogDeps, request: GetCallRequest): Promise<CallRecord> {
  const callId = callIdOf(request.callId);
  if (!callId) throw AppError.invalid('The call id must be an integer of at least 1', [{ field: 'callId', problem: 'must be an int64 >= 1' }]);
  const row = UUID.test(request.teamId) ? await findCallRecord(deps.db, request.teamId, callId) : null;
  if (!row) throw new AppError('call_not_found', 'No such call in this team');
  const ref = serviceAccountOf(row);
  return toCallRecord(row, await existingServiceAccounts(deps, ref ? [ref] : []));
}
