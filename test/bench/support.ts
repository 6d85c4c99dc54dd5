import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import { freePort } from '../src/net';


/**
 * Runs the platform as its own process (as in production), so the load generator in this process does not
 * share its event loop. Resolves once /readyz answers 200.
 */
export async function startPlatformProcess(env: NodeJS.ProcessEnv): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const root = path.resolve(__dirname, '../..');
  // BENCH_NODE_ARGS passes flags to the platform's node, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'packages/platform/src/main.ts', '--target=all'], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), GRPC_PORT: '0', LOG_LEVEL: env.LOG_LEVEL ?? 'warn' },
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
