import type { EdgeDeps } from '../edge-deps';
import type { AnyRouteDefinition } from '../route';

// PLACEHOLDER: replaced by the people routes.
export function peopleRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  void deps;
  return [];
}
