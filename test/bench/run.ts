import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';

/** `npm run bench [-- name]`: runs every `*.bench.ts` here (or those whose name contains `name`), one at a time. */
const filter = process.argv[2] ?? '';
const benches = readdirSync(__dirname).filter((file) => file.endsWith('.bench.ts') && file.includes(filter));
if (benches.length === 0) throw new Error(`no benchmark matches "${filter}"`);
for (const bench of benches) {
  process.stdout.write(`\n## ${bench}\n`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, bench)], { stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
