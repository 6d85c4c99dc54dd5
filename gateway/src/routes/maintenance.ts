import type { EdgeDeps } from '../edge-deps';
import type { AnyRouteDefinition } from '../route';

// PLACEHOLDER: replaced by the maintenance routes.
export function maintenanceRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  void deps;
  return [];
}
