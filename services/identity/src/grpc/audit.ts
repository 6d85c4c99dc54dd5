import { AppError } from '@platform/runtime';
import type { IdentityDeps } from '../deps';
import type { IdentityHandlers } from './handlers';

// PLACEHOLDER: replaced by the audit implementation.
const notYet = async (): Promise<never> => {
  throw new AppError('unavailable', 'Not implemented yet');
};

export function auditHandlers(deps: IdentityDeps): IdentityHandlers<'listAuditEntries' | 'getAuditEntry'> {
  void deps;
  return {
    listAuditEntries: notYet,
    getAuditEntry: notYet,
  };
}
