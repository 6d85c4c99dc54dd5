import type { ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { freePort } from '../src/net';
import { createTestDatabase, deleteKafkaState, infraUrl, uniquePrefix } from '../src/infra';
import { TEST_ADMIN } from '../src/platform';
import { spawnPlatform as spawnPlatformProcess, stopPlatformProcess, waitReady } from '../src/platform-process';


const SERVICE_TARGETS = ['identity', 'catalog', 'agents', 'knowledge', 'billing', 'notifications'];
/** The node flags the platform runs with in production (deploy/Dockerfile's ENTRYPOINT, package.json's start). */
const PLATFORM_NODE_FLAGS = ['--max-semi-space-size=32'];

export interface PlatformProcess {
  /** The edge's public listener (PORT). */
  url: string;
  /** The edge's ops listener (OPS_PORT): /healthz, /readyz, /metrics. */
  opsUrl: string;
  origin: string;
  /** The process serving HTTP (the edge): the one whose CPU a benchmark of the edge reads. */
  pid: number;
  /** Every process of the platform (one, or the edge and the services when split). */
  pids: number[];
  stop(): Promise<void>;
}

/**
 * Runs the platform as its own process (as in production), so the load generator in this process does not
 * share its event loop. Resolves once /readyz answers 200 on the ops listener (OPS_PORT) of each process: every
 * process gets a free ops port of its own, so none binds the default 8081, and /readyz is not served on PORT.
 *
 * `split` (or BENCH_SPLIT=1) runs it as two processes, the way Kubernetes runs it: the edge alone
 * (`--target=gateway`) and the services (`--target=identity,catalog,…`) on their own gRPC port, so the edge and
 * the services each have an event loop (and on a 2-core machine, a core) of their own.
 */
export async function startPlatformProcess(env: NodeJS.ProcessEnv, options: { split?: boolean } = {}): Promise<PlatformProcess> {
  const split = options.split ?? process.env.BENCH_SPLIT === '1';
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const base = { ...process.env, APP_URL: url, ...env, LOG_LEVEL: env.LOG_LEVEL ?? 'warn' };
  const opsPort = await freePort();
  const opsUrl = `http://127.0.0.1:${opsPort}`;
  if (!split) {
    const platform = spawnPlatform('all', { ...base, PORT: String(port), OPS_PORT: String(opsPort), GRPC_PORT: '0' });
    await waitReady(`${opsUrl}/readyz`, [platform]);
    return processes(url, opsUrl, base, [platform]);
  }
  // The services process has no public listener: only its gRPC port and its ops port.
  const [servicesOpsPort, grpcPort] = [await freePort(), await freePort()];
  const services = spawnPlatform(SERVICE_TARGETS.join(','), { ...base, OPS_PORT: String(servicesOpsPort), GRPC_PORT: String(grpcPort) });
  await waitReady(`http://127.0.0.1:${servicesOpsPort}/readyz`, [services]);
  const addresses = Object.fromEntries(SERVICE_TARGETS.map((name) => [`${name.toUpperCase()}_SERVICE_ADDR`, `127.0.0.1:${grpcPort}`]));
  const edge = spawnPlatform('gateway', { ...base, ...addresses, PORT: String(port), OPS_PORT: String(opsPort), GRPC_PORT: '0' });
  await waitReady(`${opsUrl}/readyz`, [edge, services]);
  return processes(url, opsUrl, base, [edge, services]);
}

function spawnPlatform(target: string, env: NodeJS.ProcessEnv): ChildProcess {
  // BENCH_NODE_ARGS passes flags to the platform's node, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  return spawnPlatformProcess(target, env, [...PLATFORM_NODE_FLAGS, ...nodeArgs]);
}

function processes(url: string, opsUrl: string, env: NodeJS.ProcessEnv, children: ChildProcess[]): PlatformProcess {
  return {
    url,
    opsUrl,
    origin: new URL(env.APP_URL ?? url).origin,
    pid: children[0]!.pid!,
    pids: children.map((child) => child.pid!),
    // The edge first, so it stops calling the services before they go.
    stop: async () => {
      for (const child of children) await stopPlatformProcess(child);
    },
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
    cleanup: async () => {
      await database.drop();
      await deleteKafkaState(kafka, prefix);
    },
  };
}
