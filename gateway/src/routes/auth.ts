import type { EdgeDeps } from '../edge-deps';
import type { AnyRouteDefinition } from '../route';

// PLACEHOLDER: replaced by the auth routes.
export function authRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  void deps;
  return [];
}
