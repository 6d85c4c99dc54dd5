import { routeTableRows } from '../src/routes/catalogue';

// Prints the rows of the "Routes" table in docs/api.md: `node --import tsx gateway/scripts/route-table.ts`.
process.stdout.write(`${routeTableRows().join('\n')}\n`);
