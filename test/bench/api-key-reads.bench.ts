import { ApiClient, TEST_ADMIN } from '../src';
import { cpuSeconds } from './process-cpu';
import { load, realInfrastructure, startPlatformProcess, type LoadResult } from './support';

/**
 * Authenticated `/v1` reads with an API key (issue 3's target: at least 5,000 requests/s on a 2-core machine
 * with real PostgreSQL and Redis). The platform runs as its own process with every module (topology `one`), or as
 * an edge process and a services process (`split`, as Kubernetes runs it); autocannon drives it from this process
 * over loopback. Run: `npm run bench -- api-key-reads` (needs TEST_POSTGRES_URL, TEST_REDIS_URL,
 * TEST_KAFKA_BROKERS, e.g. from deploy/provision.sh).
 *
 * Narrow a run with BENCH_TOPOLOGIES (`one,split`), BENCH_AUTH_CACHE (AUTH_CACHE_SECONDS values, `0,10`),
 * BENCH_CONNECTIONS (`1,32`) and BENCH_PATHS (`/v1/me,/v1/maintenance`).
 */
const list = (name: string, fallback: string) => (process.env[name] ?? fallback).split(',').map((v) => v.trim()).filter(Boolean);

interface Row extends LoadResult {
  /** CPU milliseconds per request: every platform process, and the edge process alone. */
  platformCpuMs: number;
  edgeCpuMs: number;
}

async function main(): Promise<void> {
  const durationSeconds = Number(process.env.BENCH_SECONDS ?? 10);
  const rows: Row[] = [];

  for (const topology of list('BENCH_TOPOLOGIES', 'one,split')) {
    for (const authCacheSeconds of list('BENCH_AUTH_CACHE', '0,10')) {
      const infrastructure = await realInfrastructure('bench');
      const platform = await startPlatformProcess(
        {
          ...infrastructure.env,
          // The limit still counts every request in Redis; it is raised only so the benchmark is not refused.
          API_KEY_RATE_LIMIT_PER_MINUTE: '100000000',
          AUTH_CACHE_SECONDS: authCacheSeconds,
        },
        { split: topology === 'split' },
      );
      try {
        const target = { url: (p: string) => `${platform.url}${p}`, origin: platform.origin };
        const admin = new ApiClient(target);
        if ((await admin.signIn(TEST_ADMIN.email, TEST_ADMIN.password)).status !== 200) throw new Error('sign-in failed');
        const team = await admin.post('/v1/teams', { slug: 'bench', name: 'Bench' });
        if (team.status !== 201) throw new Error(`team: ${team.status} ${JSON.stringify(team.body)}`);
        const key = await admin.post('/v1/teams/bench/api-keys', { name: 'bench', kind: 'personal', scopes: ['query'] });
        if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
        const headers = { authorization: `Bearer ${key.body.data.key as string}` };
        const label = `${topology === 'split' ? 'split' : 'one process'}, ${authCacheSeconds === '0' ? 'no auth cache' : `auth cache ${authCacheSeconds}s`}`;
        for (const connections of list('BENCH_CONNECTIONS', '1,32').map(Number)) {
          for (const path of list('BENCH_PATHS', '/v1/me,/v1/maintenance')) {
            const [platformBefore, edgeBefore] = [cpuSeconds(platform.pids), cpuSeconds(platform.pid)];
            const result = await load(`GET ${path}, ${label}`, { url: `${platform.url}${path}`, headers, connections, durationSeconds });
            // load() warms up for 2 s before its measured window; count those requests at the window's rate.
            const requests = result.requestsPerSecond * (durationSeconds + 2);
            rows.push({
              ...result,
              platformCpuMs: ((cpuSeconds(platform.pids) - platformBefore) * 1000) / requests,
              edgeCpuMs: ((cpuSeconds(platform.pid) - edgeBefore) * 1000) / requests,
            });
          }
        }
      } finally {
        await platform.stop();
        await infrastructure.cleanup();
      }
    }
  }
  const header = '| case | connections | requests/s | p50 ms | p99 ms | platform CPU ms/request | edge CPU ms/request | non-2xx | errors |';
  const lines = rows.map(
    (r) =>
      `| ${r.name} | ${r.connections} | ${r.requestsPerSecond.toLocaleString('en')} | ${r.latencyP50Ms} | ${r.latencyP99Ms} | ${r.platformCpuMs.toFixed(3)} | ${r.edgeCpuMs.toFixed(3)} | ${r.non2xx} | ${r.errors} |`,
  );
  process.stdout.write(`${[header, '|---|---|---|---|---|---|---|---|---|', ...lines].join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
