import type { CatalogDeps } from '../deps';
import { listCatalog } from '../domain/team-catalog';
import type { CatalogHandlers } from './handlers';

/** A team's catalog: its own published servers and the platform servers offered to it (domain/team-catalog.ts). */
export function teamCatalogHandlers(deps: CatalogDeps): CatalogHandlers<'listCatalog'> {
  return {
    listCatalog: (request) => listCatalog(deps, request),
  };
}
