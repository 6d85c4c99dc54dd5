import type { IdentityDeps } from '../deps';
import {
  createServiceAccount,
  deleteServiceAccount,
  getServiceAccount,
  listServiceAccounts,
  updateServiceAccount,
} from '../domain/service-accounts';
import type { IdentityHandlers } from './handlers';

/** Service accounts (§2.14); their keys are made and listed through the API key RPCs. */
export function serviceAccountHandlers(
  deps: IdentityDeps,
): IdentityHandlers<'createServiceAccount' | 'listServiceAccounts' | 'getServiceAccount' | 'updateServiceAccount' | 'deleteServiceAccount'> {
  return {
    createServiceAccount: (request) => createServiceAccount(deps, request),
    listServiceAccounts: (request) => listServiceAccounts(deps, request),
    getServiceAccount: (request) => getServiceAccount(deps, request),
    updateServiceAccount: (request) => updateServiceAccount(deps, request),
    deleteServiceAccount: async (request) => {
      await deleteServiceAccount(deps, request);
      return {};
    },
  };
}
