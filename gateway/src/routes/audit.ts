import type { EdgeDeps } from '../edge-deps';
import type { AnyRouteDefinition } from '../route';

// PLACEHOLDER: replaced by the audit routes.
export function auditRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  void deps;
  return [];
}
