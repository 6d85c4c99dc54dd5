import { z } from 'zod';
import { ActorKind } from '@platform/proto/gen/platform/common/v1/common';
import type {
  AuditEntry,
  GetAuditEntryRequest,
  ListAuditEntriesRequest,
  ListAuditEntriesResponse,
} from '@platform/proto/gen/platform/identity/v1/identity';
import { AppError, scrubSecrets, timeOrderedUuid, type AuditEventData, type DomainEvent, type Logger, type Transaction } from '@platform/runtime';
import type { IdentityDeps } from '../deps';
import { findAuditEntry, insertAuditEntries, listAuditEntries, markTargetGone, type AuditEntryRow, type NewAuditEntry } from '../store/audit-store';
import { iso } from '../store/mappers';

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 200;
const INT64_MAX = 9223372036854775807n;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const reference = z.object({ type: z.string(), id: z.string(), label: z.string() });
// What an `audit.v1` event must carry to be stored; anything else is logged and skipped (never retried forever).
const auditEventData = z.object({
  teamId: z.string().nullable(),
  action: z.string().min(1),
  actor: z.object({
    kind: z.string(),
    userId: z.string().nullable(),
    displayName: z.string().nullable(),
    email: z.string().nullable(),
    apiKeyName: z.string().nullable(),
    serviceAccountId: z.string().nullable().default(null),
  }),
  target: reference,
  parent: reference.optional(),
  before: z.unknown().optional(),
  after: z.unknown().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  requestId: z.string().default(''),
  via: z.object({ kind: z.string(), name: z.string() }).optional(),
  clientIp: z.string().default(''),
});

/** Actions that remove their target: earlier entries about it then show it as gone. */
export function removesTarget(action: string): boolean {
  return action.endsWith('.delete') || action.endsWith('.remove');
}

/**
 * Stores other services' audit events (`audit.v1`), in order, run once per event id by the consumer in its
 * transaction. An event in an unexpected shape is logged and skipped.
 */
export async function storeAuditEvents(tx: Transaction, events: readonly DomainEvent<unknown>[], logger: Logger): Promise<void> {
  const entries: NewAuditEntry[] = [];
  for (const event of events) {
    const parsed = auditEventData.safeParse(event.data);
    if (!parsed.success) {
      logger.warn({ eventId: event.id, type: event.type, source: event.source }, 'audit event in an unexpected shape skipped');
      continue;
    }
    entries.push({ eventId: event.id, occurredAt: event.occurredAt, data: scrubbed(parsed.data as AuditEventData) });
  }
  await storeAuditEntries(tx, entries);
}

/**
 * Records one of this service's own audit entries in the caller's transaction, with the change it describes. The
 * audit log is this service's data, so its own entries are written here directly; other services' arrive as
 * `audit.v1` events through their outboxes (docs/architecture.md, Audit entries).
 */
export async function recordAudit(tx: Transaction, data: AuditEventData): Promise<void> {
  await storeAuditEntries(tx, [newAuditEntry(data)]);
}

/** An entry of this service's own, scrubbed, for `recordAudit` or a statement that stores it itself. */
export function newAuditEntry(data: AuditEventData): NewAuditEntry {
  const now = Date.now(); // one reading: the id's time is the entry's occurredAt
  return { eventId: timeOrderedUuid(now), occurredAt: new Date(now).toISOString(), data: scrubbed(data) };
}

/**
 * Secrets are scrubbed again here, whoever wrote the entry: the writer should never have put them in, and the
 * store is where they would stay.
 */
function scrubbed(data: AuditEventData): AuditEventData {
  return {
    ...data,
    target: scrubSecrets(data.target) as AuditEventData['target'],
    ...(data.parent ? { parent: scrubSecrets(data.parent) as AuditEventData['target'] } : {}),
    before: scrubSecrets(data.before),
    after: scrubSecrets(data.after),
    metadata: scrubSecrets(data.metadata ?? {}) as Record<string, unknown>,
  };
}

/** One insert for the entries, then, for each removal, earlier entries about its target are marked gone. */
async function storeAuditEntries(tx: Transaction, entries: readonly NewAuditEntry[]): Promise<void> {
  const ids = await insertAuditEntries(tx, entries);
  for (const { eventId, data } of entries) {
    const id = ids.get(eventId);
    if (id && removesTarget(data.action)) await markTargetGone(tx, data.target, id);
  }
}

const ACTOR_KINDS: Record<string, ActorKind> = {
  user: ActorKind.ACTOR_KIND_USER,
  api_key: ActorKind.ACTOR_KIND_API_KEY,
  service_account: ActorKind.ACTOR_KIND_SERVICE_ACCOUNT,
  system: ActorKind.ACTOR_KIND_SYSTEM,
};

const jsonText = (value: unknown): string => (value === null || value === undefined ? '' : JSON.stringify(value));
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

export function toAuditEntry(row: AuditEntryRow): AuditEntry {
  const actor = row.actor ?? {};
  return {
    id: row.id,
    occurredAt: iso(row.occurred_at),
    teamId: row.team_id ?? '',
    teamName: row.team_name ?? '',
    teamSlug: row.team_slug ?? '',
    action: row.action,
    actor: {
      kind: ACTOR_KINDS[row.actor_kind] ?? ActorKind.ACTOR_KIND_SYSTEM,
      userId: row.actor_user_id ?? '',
      displayName: text(actor.displayName),
      email: text(actor.email),
      apiKeyName: text(actor.apiKeyName),
      serviceAccountId: text(actor.serviceAccountId),
    },
    targetType: row.target_type,
    targetId: row.target_id,
    targetLabel: row.target_label,
    targetExists: row.target_exists,
    parentJson: jsonText(row.parent),
    beforeJson: jsonText(row.before),
    afterJson: jsonText(row.after),
    metadataJson: JSON.stringify(row.metadata ?? {}),
    requestId: row.request_id,
    viaKind: row.via?.kind ?? '',
    viaName: row.via?.name ?? '',
    clientIp: row.client_ip,
  };
}

/** An int64 id >= 1 as a decimal string, or null. */
function entryIdOf(value: string): string | null {
  if (!/^[1-9]\d{0,18}$/.test(value) || BigInt(value) > INT64_MAX) return null;
  return value;
}

const isCost = (action: string): boolean => action.startsWith('costs.');

export async function listTeamAuditEntries(deps: IdentityDeps, request: ListAuditEntriesRequest): Promise<ListAuditEntriesResponse> {
  if (!UUID.test(request.teamId)) throw AppError.notFound('Team');
  if (request.actorId && !UUID.test(request.actorId)) {
    throw AppError.invalid('The actor filter must be a person id', [{ field: 'actorId', problem: 'must be a uuid' }]);
  }
  const cursor = request.page?.cursor ?? '';
  const beforeId = cursor ? entryIdOf(cursor) : undefined;
  if (beforeId === null) throw AppError.invalid('The cursor is malformed', [{ field: 'cursor', problem: 'malformed cursor' }]);
  const requested = request.page?.pageSize ?? 0;
  const limit = requested > 0 ? Math.min(requested, MAX_PAGE_SIZE) : DEFAULT_PAGE_SIZE;
  const rows = await listAuditEntries(deps.db, {
    teamId: request.teamId,
    ...(request.action ? { action: request.action } : {}),
    ...(request.actorId ? { actorId: request.actorId } : {}),
    ...(request.targetType ? { targetType: request.targetType } : {}),
    ...(request.targetId ? { targetId: request.targetId } : {}),
    ...(request.from ? { from: request.from } : {}),
    ...(request.to ? { to: request.to } : {}),
    excludeCosts: request.excludeCosts,
    ...(beforeId ? { beforeId } : {}),
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const more = rows.length > limit;
  return { entries: page.map(toAuditEntry), page: { nextCursor: more ? page[page.length - 1]!.id : '' } };
}

/** One entry of a team; entries of other teams, and cost entries for callers who may not see them, are 404. */
export async function getTeamAuditEntry(deps: IdentityDeps, request: GetAuditEntryRequest): Promise<AuditEntry> {
  const entryId = entryIdOf(request.entryId);
  if (!entryId || !UUID.test(request.teamId)) throw AppError.notFound('Audit entry');
  const row = await findAuditEntry(deps.db, request.teamId, entryId);
  if (!row || (request.excludeCosts && isCost(row.action))) throw AppError.notFound('Audit entry');
  return toAuditEntry(row);
}
