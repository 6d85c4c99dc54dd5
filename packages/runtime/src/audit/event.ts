import type { RequestContext } from '@platform/proto/gen/platform/common/v1/common';
import { ActorKind } from '@platform/proto/gen/platform/common/v1/common';
import type { Transaction } from '../db/port';
import { TOPICS } from '../bus/port';
import { writeEvent, type DomainEvent, type NewEvent } from '../outbox';
import { scrubSecrets } from './scrub';

/** Who did it, as an audit entry shows it (§2.12 `actor`). Never a credential. */
export interface AuditActor {
  kind: 'user' | 'api_key' | 'service_account' | 'system';
  userId: string | null;
  displayName: string | null;
  email: string | null;
  apiKeyName: string | null;
  serviceAccountId: string | null;
}

export interface AuditTarget {
  type: string;
  id: string;
  label: string;
}

/** The payload of an `audit.v1` event; the identity service stores one entry per event. */
export interface AuditEventData {
  /** The team the entry belongs to; platform-level actions use the platform team. */
  teamId: string | null;
  /** Dotted action name, for example `team.member_add`. */
  action: string;
  actor: AuditActor;
  target: AuditTarget;
  parent?: AuditTarget;
  before?: unknown;
  after?: unknown;
  metadata?: Record<string, unknown>;
  requestId: string;
  via?: { kind: string; name: string };
  clientIp: string;
}

export type AuditEvent = DomainEvent<AuditEventData>;

export const SYSTEM_ACTOR: AuditActor = {
  kind: 'system',
  userId: null,
  displayName: null,
  email: null,
  apiKeyName: null,
  serviceAccountId: null,
};

/** The request context of work the platform does by itself (schedulers, the data plane's refreshes, consumers). */
export function systemRequestContext(viaKind: string, viaName: string): RequestContext {
  return {
    requestId: '',
    actor: { kind: ActorKind.ACTOR_KIND_SYSTEM, userId: '', displayName: '', email: '', apiKeyName: '', serviceAccountId: '' },
    clientIp: '',
    viaKind,
    viaName,
  };
}

const ACTOR_KINDS: Partial<Record<ActorKind, AuditActor['kind']>> = {
  [ActorKind.ACTOR_KIND_UNSPECIFIED]: 'system',
  [ActorKind.ACTOR_KIND_USER]: 'user',
  [ActorKind.ACTOR_KIND_API_KEY]: 'api_key',
  [ActorKind.ACTOR_KIND_SERVICE_ACCOUNT]: 'service_account',
  [ActorKind.ACTOR_KIND_SYSTEM]: 'system',
};

/** The audit fields a service takes from the request context the edge sent. */
export function auditContext(context: RequestContext | undefined): Pick<AuditEventData, 'actor' | 'requestId' | 'via' | 'clientIp'> {
  const actor = context?.actor;
  const orNull = (value: string | undefined) => (value ? value : null);
  return {
    actor: actor
      ? {
          kind: ACTOR_KINDS[actor.kind] ?? 'system',
          userId: orNull(actor.userId),
          displayName: orNull(actor.displayName),
          email: orNull(actor.email),
          apiKeyName: orNull(actor.apiKeyName),
          serviceAccountId: orNull(actor.serviceAccountId),
        }
      : SYSTEM_ACTOR,
    requestId: context?.requestId ?? '',
    ...(context?.viaKind ? { via: { kind: context.viaKind, name: context.viaName } } : {}),
    clientIp: context?.clientIp ?? '',
  };
}

/**
 * The outbox event of an audit entry. Values that look like secrets are scrubbed here as a last line of defence;
 * callers must not pass them in the first place.
 */
export function auditEvent(schema: string, data: AuditEventData): NewEvent<AuditEventData> {
  const scrubbed: AuditEventData = {
    ...data,
    before: scrubSecrets(data.before),
    after: scrubSecrets(data.after),
    metadata: scrubSecrets(data.metadata ?? {}) as Record<string, unknown>,
  };
  return { topic: TOPICS.audit, type: data.action, key: data.teamId ?? 'platform', data: scrubbed, source: schema };
}

/** Records an audit entry in the same transaction as the change it describes, through the outbox. */
export function writeAuditEvent(tx: Transaction, schema: string, data: AuditEventData): Promise<AuditEvent> {
  return writeEvent(tx, schema, auditEvent(schema, data));
}
