import type { EdgeDeps } from '../edge-deps';
import type { AnyRouteDefinition } from '../route';

// PLACEHOLDER: replaced by the service-accounts routes.
export function serviceAccountRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  void deps;
  return [];
}
