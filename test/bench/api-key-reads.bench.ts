import { ApiClient, TEST_ADMIN } from '../src';
import { load, printTable, realInfrastructure, startPlatformProcess, type LoadResult } from './support';

/**
 * Authenticated `/v1` reads with an API key (issue 3's target: at least 5,000 requests/s on a 2-core machine
 * with real PostgreSQL and Redis). The platform runs as its own process with every module; autocannon drives
 * it from this process over loopback. Run: `npm run bench -- api-key-reads` (needs TEST_POSTGRES_URL,
 * TEST_REDIS_URL, TEST_KAFKA_BROKERS, e.g. from deploy/provision.sh).
 */
async function main(): Promise<void> {
  const durationSeconds = Number(process.env.BENCH_SECONDS ?? 10);
  const results: LoadResult[] = [];

  for (const authCacheSeconds of ['0', '10']) {
    const infrastructure = await realInfrastructure('bench');
    const platform = await startPlatformProcess({
      ...infrastructure.env,
      // The limit still counts every request in Redis; it is raised only so the benchmark is not refused.
      API_KEY_RATE_LIMIT_PER_MINUTE: '100000000',
      AUTH_CACHE_SECONDS: authCacheSeconds,
    });
    try {
      const target = { url: (p: string) => `${platform.url}${p}`, origin: platform.origin };
      const admin = new ApiClient(target);
      if ((await admin.signIn(TEST_ADMIN.email, TEST_ADMIN.password)).status !== 200) throw new Error('sign-in failed');
      const team = await admin.post('/v1/teams', { slug: 'bench', name: 'Bench' });
      if (team.status !== 201) throw new Error(`team: ${team.status} ${JSON.stringify(team.body)}`);
      const key = await admin.post('/v1/teams/bench/api-keys', { name: 'bench', kind: 'personal', scopes: ['query'] });
      if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
      const headers = { authorization: `Bearer ${key.body.data.key as string}` };
      const label = authCacheSeconds === '0' ? 'no auth cache' : `auth cache ${authCacheSeconds}s`;
      for (const connections of [1, 32]) {
        results.push(await load(`GET /v1/me, ${label}`, { url: `${platform.url}/v1/me`, headers, connections, durationSeconds }));
        results.push(await load(`GET /v1/maintenance, ${label}`, { url: `${platform.url}/v1/maintenance`, headers, connections, durationSeconds }));
      }
    } finally {
      await platform.stop();
      await infrastructure.cleanup();
    }
  }
  printTable(results);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
