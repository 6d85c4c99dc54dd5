import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { freePort } from '../src/net';
import { createTestDatabase, infraUrl, uniquePrefix } from '../src/infra';
import { TEST_ADMIN } from '../src/platform';


/**
 * Runs the platform as its own process (as in production), so the load generator in this process does not
 * share its event loop. Resolves once /readyz answers 200.
 */
export async function startPlatformProcess(env: NodeJS.ProcessEnv): Promise<{ url: string; origin: string; stop(): Promise<void> }> {
  const port = await freePort();
  const root = path.resolve(__dirname, '../..');
  // BENCH_NODE_ARGS passes flags to the platform's node, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'packages/platform/src/main.ts', '--target=all'], {
    cwd: root,
    env: { ...process.env, APP_URL: `http://127.0.0.1:${port}`, ...env, PORT: String(port), GRPC_PORT: '0', LOG_LEVEL: env.LOG_LEVEL ?? 'warn' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`platform exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('platform did not become ready');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    origin: new URL(env.APP_URL ?? url).origin,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export interface LoadResult {
  name: string;
  connections: number;
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  non2xx: number;
  errors: number;
}

/** Drives `url` with autocannon for `durationSeconds` after a short warm-up. */
export async function load(name: string, options: { url: string; headers?: Record<string, string>; connections: number; durationSeconds: number }): Promise<LoadResult> {
  const run = (duration: number) =>
    autocannon({ url: options.url, headers: options.headers ?? {}, connections: options.connections, duration, pipelining: 1 });
  await run(2);
  const result = await run(options.durationSeconds);
  return {
    name,
    connections: options.connections,
    requestsPerSecond: Math.round(result.requests.average),
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

export function printTable(results: LoadResult[]): void {
  const header = '| case | connections | requests/s | p50 ms | p99 ms | non-2xx | errors |';
  const lines = results.map((r) => `| ${r.name} | ${r.connections} | ${r.requestsPerSecond} | ${r.latencyP50Ms} | ${r.latencyP99Ms} | ${r.non2xx} | ${r.errors} |`);
  process.stdout.write(`${[header, '|---|---|---|---|---|---|---|', ...lines].join('\n')}\n`);
}

/** Percentile of sorted numbers (nearest rank). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Environment of a platform process on the real infrastructure of TEST_POSTGRES_URL, TEST_REDIS_URL and TEST_KAFKA_BROKERS. */
export async function realInfrastructure(label: string): Promise<{ env: NodeJS.ProcessEnv; cleanup(): Promise<void> }> {
  const postgres = infraUrl('postgres');
  const redis = infraUrl('redis');
  const kafka = infraUrl('kafka');
  if (!postgres || !redis || !kafka) throw new Error('set TEST_POSTGRES_URL, TEST_REDIS_URL and TEST_KAFKA_BROKERS');
  const database = await createTestDatabase(postgres);
  const prefix = uniquePrefix(label);
  return {
    env: {
      DATABASE_URL: database.url,
      DATABASE_POOL_MAX: '20',
      REDIS_URL: redis,
      REDIS_KEY_PREFIX: prefix,
      KAFKA_BROKERS: kafka,
      KAFKA_TOPIC_PREFIX: prefix,
      ENCRYPTION_KEY: `k1:${randomBytes(32).toString('base64')}`,
      API_KEY_PEPPER: randomBytes(32).toString('base64'),
      BOOTSTRAP_ADMIN_EMAIL: TEST_ADMIN.email,
      BOOTSTRAP_ADMIN_PASSWORD: TEST_ADMIN.password,
    },
    cleanup: () => database.drop(),
  };
}
