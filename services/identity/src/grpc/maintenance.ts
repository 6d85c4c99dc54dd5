import { AppError } from '@platform/runtime';
import type { IdentityDeps } from '../deps';
import type { IdentityHandlers } from './handlers';

// PLACEHOLDER: replaced by the maintenance implementation.
const notYet = async (): Promise<never> => {
  throw new AppError('unavailable', 'Not implemented yet');
};

export function maintenanceHandlers(deps: IdentityDeps): IdentityHandlers<'getMaintenance' | 'setMaintenance'> {
  void deps;
  return {
    getMaintenance: notYet,
    setMaintenance: notYet,
  };
}
