import { AppError } from '@platform/runtime';
import { authenticate } from '../domain/authenticate';
import type { IdentityDeps } from '../deps';
import type { IdentityHandlers } from './handlers';

// PLACEHOLDER: replaced by the auth implementation.
const notYet = async (): Promise<never> => {
  throw new AppError('unavailable', 'Not implemented yet');
};

export function authHandlers(deps: IdentityDeps): IdentityHandlers<'authenticate' | 'signIn' | 'signOut' | 'getMe'> {
  void deps;
  return {
    authenticate: (request) => authenticate(deps, request),
    signIn: notYet,
    signOut: notYet,
    getMe: notYet,
  };
}
