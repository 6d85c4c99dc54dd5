import { SYSTEM_ACTOR, type AuditActor, type AuditEventData, type Transaction } from '@platform/runtime';
import { PLATFORM_TEAM_ID } from '../../deps';
import type { NewAuditEntry } from '../../store/audit-store';
import { newAuditEntry, recordAudit } from '../audit';

/**
 * OAuth audit entries all belong to the platform team: clients, consents and connections are platform-level
 * (gateways are the catalog's, and the gateway is named as the entry's parent). Never a token or code here.
 */
export type OAuthAuditAction = 'oauth.client_register' | 'oauth.consent' | 'oauth.token_issue' | 'oauth.revoke' | 'oauth.trusted_clients_update';

/** The person a token request acts for; the client named as `via`. */
export function personActor(person: { id: string; email: string; displayName: string }): AuditActor {
  return { kind: 'user', userId: person.id, displayName: person.displayName, email: person.email, apiKeyName: null, serviceAccountId: null };
}

export const anonymousActor: AuditActor = SYSTEM_ACTOR;

export function gatewayParent(gatewayId: string, gatewaySlug: string): AuditEventData['parent'] {
  return { type: 'gateway', id: gatewayId, label: gatewaySlug };
}

export function viaClient(clientName: string, clientId: string): AuditEventData['via'] {
  return { kind: 'oauth_client', name: clientName || clientId };
}

export type OAuthAuditEntry = Omit<AuditEventData, 'teamId' | 'action'> & { action: OAuthAuditAction };

/** An OAuth audit entry ready to store, for a statement that stores it itself (the refresh grant's rotation). */
export function oauthAuditEntry(entry: OAuthAuditEntry): NewAuditEntry {
  return newAuditEntry({ ...entry, teamId: PLATFORM_TEAM_ID });
}

export async function writeOAuthAudit(tx: Transaction, entry: OAuthAuditEntry): Promise<void> {
  await recordAudit(tx, { ...entry, teamId: PLATFORM_TEAM_ID });
}
