import type { EdgeDeps } from '../edge-deps';
import type { AnyRouteDefinition } from '../route';

// PLACEHOLDER: replaced by the api-keys routes.
export function apiKeyRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  void deps;
  return [];
}
