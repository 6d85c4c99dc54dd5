import { AppError } from '@platform/runtime';
import type { IdentityDeps } from '../deps';
import type { IdentityHandlers } from './handlers';

// PLACEHOLDER: replaced by the service-accounts implementation.
const notYet = async (): Promise<never> => {
  throw new AppError('unavailable', 'Not implemented yet');
};

export function serviceAccountHandlers(deps: IdentityDeps): IdentityHandlers<'createServiceAccount' | 'listServiceAccounts' | 'getServiceAccount' | 'updateServiceAccount' | 'deleteServiceAccount'> {
  void deps;
  return {
    createServiceAccount: notYet,
    listServiceAccounts: notYet,
    getServiceAccount: notYet,
    updateServiceAccount: notYet,
    deleteServiceAccount: notYet,
  };
}
