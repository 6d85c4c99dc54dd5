import { AppError } from '@platform/runtime';
import type { IdentityDeps } from '../deps';
import type { IdentityHandlers } from './handlers';

// PLACEHOLDER: replaced by the teams implementation.
const notYet = async (): Promise<never> => {
  throw new AppError('unavailable', 'Not implemented yet');
};

export function teamHandlers(deps: IdentityDeps): IdentityHandlers<'createTeam' | 'listTeams' | 'getTeam' | 'updateTeam' | 'listMembers' | 'addMember' | 'updateMember' | 'removeMember'> {
  void deps;
  return {
    createTeam: notYet,
    listTeams: notYet,
    getTeam: notYet,
    updateTeam: notYet,
    listMembers: notYet,
    addMember: notYet,
    updateMember: notYet,
    removeMember: notYet,
  };
}
