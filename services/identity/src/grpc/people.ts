import { createPersonByAdmin, getPerson, listPeople, updatePerson } from '../domain/people-admin';
import type { IdentityDeps } from '../deps';
import type { IdentityHandlers } from './handlers';

export function peopleHandlers(deps: IdentityDeps): IdentityHandlers<'createPerson' | 'listPeople' | 'getPerson' | 'updatePerson'> {
  return {
    createPerson: (request) => createPersonByAdmin(deps, request),
    listPeople: (request) => listPeople(deps, request),
    getPerson: (request) => getPerson(deps, request),
    updatePerson: (request) => updatePerson(deps, request),
  };
}
