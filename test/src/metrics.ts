/**
 * The sum of a metric's samples on an ops listener's `/metrics` (Prometheus text) whose labels include every one of
 * `labels`: e.g. `metricSum(platform.opsUrl('/metrics'), 'platform_mcp_calls_total', { outcome: 'ok' })`. 0 when no
 * sample matches, so tests compare before and after.
 */
export async function metricSum(metricsUrl: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    const sample = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample || sample[1] !== name) continue;
    const found = labelsOf(sample[2] ?? '');
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) sum += Number(sample[3]);
  }
  return sum;
}

/** Every label of a sample's label set, unescaped as the exposition format escapes values (\\, \", \n). */
export function labelsOf(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [, key, value] of text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
    labels[key!] = value!.replace(/\\(.)/g, (_, escaped: string) => (escaped === 'n' ? '\n' : escaped));
  }
  return labels;
}
