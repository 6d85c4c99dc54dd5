import type { IdentityDeps } from '../deps';
import { getTeamAuditEntry, listTeamAuditEntries } from '../domain/audit';
import type { IdentityHandlers } from './handlers';

/** The audit log: reading a team's entries (the edge decides who may, and whether cost entries are hidden). */
export function auditHandlers(deps: IdentityDeps): IdentityHandlers<'listAuditEntries' | 'getAuditEntry'> {
  return {
    listAuditEntries: (request) => listTeamAuditEntries(deps, request),
    getAuditEntry: (request) => getTeamAuditEntry(deps, request),
  };
}
