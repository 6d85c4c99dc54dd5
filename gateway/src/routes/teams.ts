import type { EdgeDeps } from '../edge-deps';
import type { AnyRouteDefinition } from '../route';

// PLACEHOLDER: replaced by the teams routes.
export function teamRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  void deps;
  return [];
}
