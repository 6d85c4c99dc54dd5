import { TARGETS } from './modules';

/** Parses `--target` (one name or a comma list) into module names; throws listing the valid targets. */
export function parseTargets(value: string | undefined): { targets: string[]; modules: string[] } {
  const targets = (value ?? 'all')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  if (targets.length === 0) targets.push('all');
  const unknown = targets.filter((t) => !TARGETS[t]);
  if (unknown.length > 0) {
    throw new Error(`unknown target ${unknown.map((u) => `"${u}"`).join(', ')}; valid targets: ${Object.keys(TARGETS).join(', ')}`);
  }
  return { targets, modules: [...new Set(targets.flatMap((t) => TARGETS[t]!))] };
}
