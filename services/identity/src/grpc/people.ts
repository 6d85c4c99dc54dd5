import { AppError } from '@platform/runtime';
import type { IdentityDeps } from '../deps';
import type { IdentityHandlers } from './handlers';

// PLACEHOLDER: replaced by the people implementation.
const notYet = async (): Promise<never> => {
  throw new AppError('unavailable', 'Not implemented yet');
};

export function peopleHandlers(deps: IdentityDeps): IdentityHandlers<'createPerson' | 'listPeople' | 'getPerson' | 'updatePerson'> {
  void deps;
  return {
    createPerson: notYet,
    listPeople: notYet,
    getPerson: notYet,
    updatePerson: notYet,
  };
}
