import { authenticate } from '../domain/authenticate';
import { getMe } from '../domain/me';
import { signOut } from '../domain/sessions';
import { signIn } from '../domain/sign-in';
import type { IdentityDeps } from '../deps';
import type { IdentityHandlers } from './handlers';

export function authHandlers(deps: IdentityDeps): IdentityHandlers<'authenticate' | 'signIn' | 'signOut' | 'getMe'> {
  return {
    authenticate: (request) => authenticate(deps, request),
    signIn: (request) => signIn(deps, request),
    signOut: (request) => signOut(deps, request),
    getMe: (request) => getMe(deps, request),
  };
}
