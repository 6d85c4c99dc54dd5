import type { IdentityDeps } from '../deps';
import { getMaintenance, setMaintenance } from '../domain/maintenance';
import type { IdentityHandlers } from './handlers';

/** Maintenance mode: read by every process, changed by platform admins (the edge decides who). */
export function maintenanceHandlers(deps: IdentityDeps): IdentityHandlers<'getMaintenance' | 'setMaintenance'> {
  return {
    getMaintenance: () => getMaintenance(deps),
    setMaintenance: (request) => setMaintenance(deps, request),
  };
}
