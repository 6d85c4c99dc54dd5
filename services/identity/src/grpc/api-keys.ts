import { AppError } from '@platform/runtime';
import type { IdentityDeps } from '../deps';
import type { IdentityHandlers } from './handlers';

// PLACEHOLDER: replaced by the api-keys implementation.
const notYet = async (): Promise<never> => {
  throw new AppError('unavailable', 'Not implemented yet');
};

export function apiKeyHandlers(deps: IdentityDeps): IdentityHandlers<'createApiKey' | 'listApiKeys' | 'getApiKey' | 'revokeApiKey'> {
  void deps;
  return {
    createApiKey: notYet,
    listApiKeys: notYet,
    getApiKey: notYet,
    revokeApiKey: notYet,
  };
}
