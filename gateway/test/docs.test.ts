import { readFileSync } from 'node:fs';
import path from 'node:path';
import { routeCatalogue } from '../src/routes/catalogue';

/** docs/api.md documents every route: a route added without its row fails here (print rows with gateway/scripts/route-table.ts). */
it('lists every /v1 route with its callers in docs/api.md', () => {
  const docs = readFileSync(path.resolve(__dirname, '../../docs/api.md'), 'utf8');
  const missing = routeCatalogue()
    .map((route) => `\`${route.method.toUpperCase()} ${route.path}\` | ${route.auth.callers} |`)
    .filter((row) => !docs.includes(row));
  expect(missing).toEqual([]);
});
