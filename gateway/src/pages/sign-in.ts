import type { Express } from 'express';
import type { EdgeDeps } from '../edge-deps';

// PLACEHOLDER: replaced by the sign-in page.
export function mountSignInPage(app: Express, deps: EdgeDeps): void {
  void app;
  void deps;
}
