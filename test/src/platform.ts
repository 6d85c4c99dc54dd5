import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { startPlatform, type RunningPlatform } from '@platform/platform/src/platform';
import { createTestDatabase, deleteKafkaState, infraUrl, isCI, uniquePrefix } from './infra';
import { slowStopLogger } from './logging';
import { spawnPlatform, stopPlatformProcess, waitReady } from './platform-process';
import type { Logger } from '@platform/runtime';

/** Environment for an embedded `--target=all` platform on ephemeral ports in a fresh data directory. */
export function embeddedEnv(): { env: NodeJS.ProcessEnv; cleanup(): Promise<void> } {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-'));
  return {
    env: { DATA_DIR: dataDir, PORT: '0', OPS_PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'silent', CHECK_RESPONSES: 'true' },
    cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

/** Environment for a platform on real Postgres (a fresh database), Redis and Kafka, isolated by prefixes. */
export async function realInfraEnv(urls: { postgres: string; redis: string; kafka: string }): Promise<{
  env: NodeJS.ProcessEnv;
  cleanup(): Promise<void>;
}> {
  const database = await createTestDatabase(urls.postgres);
  const prefix = uniquePrefix('platform');
  return {
    env: {
      PORT: '0',
      OPS_PORT: '0',
      GRPC_PORT: '0',
      GRPC_HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      // Every answer a test sees is also held to its documented shape (docs/api.md, Responses).
      CHECK_RESPONSES: 'true',
      DATABASE_URL: database.url,
      DATABASE_POOL_MAX: '5',
      REDIS_URL: urls.redis,
      REDIS_KEY_PREFIX: prefix,
      KAFKA_BROKERS: urls.kafka,
      KAFKA_TOPIC_PREFIX: prefix,
      ENCRYPTION_KEY: `k1:${randomBytes(32).toString('base64')}`,
      API_KEY_PEPPER: randomBytes(32).toString('base64'),
      OUTBOX_POLL_MS: '200',
    },
    cleanup: async () => {
      await database.drop();
      await deleteKafkaState(urls.kafka, prefix);
    },
  };
}

export interface TestPlatform {
  platform: RunningPlatform;
  env: NodeJS.ProcessEnv;
  /** Absolute URL of a path on the platform's HTTP listener (the edge). */
  url(pathname: string): string;
  /** Absolute URL of a path on the platform's ops listener: /healthz, /readyz, /metrics. */
  opsUrl(pathname: string): string;
  /** The APP_URL origin, which browser writes must send as Origin. */
  origin: string;
  /** APP_URL: gateways' resources are `{appUrl}/mcp/{slug}`. */
  appUrl: string;
  stop(): Promise<void>;
}

export const TEST_ADMIN = { email: 'admin@example.test', password: 'correct horse battery staple' };

/**
 * The whole platform (`--target=all`) for an integration test: on real Postgres, Redis and Kafka when they are
 * configured (always under CI), otherwise on the embedded adapters. A platform admin is bootstrapped from
 * TEST_ADMIN. `env` adds or overrides variables.
 *
 * MCP servers are not health-checked or re-discovered on a schedule unless a test asks (MCP_HEALTH_CHECK_SECONDS,
 * MCP_REFRESH_SECONDS): tests register servers at public literal addresses to exercise the address guard, and a
 * server whose URL or credential changed is due for a check at once, so the checker could try to reach those
 * addresses in the background (tests must send nothing beyond loopback) and keep the platform's stop waiting on it.
 *
 * It logs nothing but a slow stop's warnings (a module, a Kafka consumer), on stderr (slowStopLogger), unless the
 * test passes a logger or a LOG_LEVEL.
 */
export async function startTestPlatform(options: { env?: NodeJS.ProcessEnv; embedded?: boolean; logger?: Logger } = {}): Promise<TestPlatform> {
  const postgres = options.embedded ? undefined : infraUrl('postgres');
  const infra = postgres
    ? await realInfraEnv({ postgres, redis: infraUrl('redis')!, kafka: infraUrl('kafka')! })
    : embeddedEnv();
  const env: NodeJS.ProcessEnv = {
    ...infra.env,
    BOOTSTRAP_ADMIN_EMAIL: TEST_ADMIN.email,
    BOOTSTRAP_ADMIN_PASSWORD: TEST_ADMIN.password,
    MCP_HEALTH_CHECK_SECONDS: '0',
    MCP_REFRESH_SECONDS: '0',
    ...options.env,
  };
  let platform: RunningPlatform;
  try {
    // A test that asks for a LOG_LEVEL gets the platform's own logger at that level.
    const logger = options.logger ?? (options.env?.LOG_LEVEL ? undefined : slowStopLogger());
    platform = await startPlatform({ target: 'all', env, ...(logger ? { logger } : {}) });
  } catch (error) {
    await infra.cleanup();
    throw error;
  }
  return asTestPlatform(platform, env, async () => {
    await platform.stop();
    await infra.cleanup();
  });
}

/** A running platform (one started by a test itself, e.g. one target of a split topology) as a TestPlatform. */
export function asTestPlatform(platform: RunningPlatform, env: NodeJS.ProcessEnv, stop: () => Promise<void>): TestPlatform {
  const appUrl = platform.context.config.env.APP_URL;
  return {
    platform,
    env,
    url: (pathname) => platformUrl(platform, pathname),
    opsUrl: (pathname) => platformOpsUrl(platform, pathname),
    origin: new URL(appUrl).origin,
    appUrl,
    stop,
  };
}

/**
 * `it` for a test that needs `startTestPlatform()`'s platform on real infrastructure, e.g. to look into its database
 * from outside (`databaseOf(platform, { required: true })`): under CI it always runs (and a missing service fails
 * it, as it fails `startTestPlatform`); elsewhere, without TEST_POSTGRES_URL, it is skipped, visibly, as a whole.
 */
export function itOnRealInfrastructure(name: string, fn: jest.ProvidesCallback, timeoutMs?: number): void {
  if (isCI() || infraUrl('postgres') !== undefined) it(name, fn, timeoutMs);
  else it.skip(`${name} (skipped: needs real Postgres, TEST_POSTGRES_URL not set)`, fn, timeoutMs);
}

/** Absolute URL of a path on a running platform's HTTP listener (the edge; a process without one has none). */
export function platformUrl(platform: RunningPlatform, pathname: string): string {
  if (platform.httpPort === undefined) throw new Error('this platform runs no edge: it has no public HTTP listener');
  return `http://127.0.0.1:${platform.httpPort}${pathname}`;
}

/** Absolute URL of a path on a running platform's ops listener (/healthz, /readyz, /metrics). */
export function platformOpsUrl(platform: RunningPlatform, pathname: string): string {
  return `http://127.0.0.1:${platform.opsPort}${pathname}`;
}

/** A platform process started by `spawnPlatformListening`, with the ports it bound. */
export interface ListeningPlatformProcess {
  child: ChildProcess;
  /** The edge's public port (undefined when the targets run no edge). */
  port: number | undefined;
  opsPort: number;
}

const LOG_LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/**
 * Spawns the platform's executable (as `spawnPlatform` does) on port 0 for its HTTP and ops listeners (and gRPC,
 * unless `env` says otherwise), and resolves with the ports it bound, read from its own `ready to serve` log line:
 * no port is chosen before the process binds it, so none can be taken by another process meanwhile. That line is
 * logged at info, so the process logs at least at info; only lines at the level `env.LOG_LEVEL` asks for (default
 * info) are passed on to this process's output. Rejects, with the process's last lines, if it exits first or is
 * not ready to serve within a minute (it is then stopped).
 */
export async function spawnPlatformListening(target: string, env: NodeJS.ProcessEnv): Promise<ListeningPlatformProcess> {
  const asked = env.LOG_LEVEL || 'info';
  const info = LOG_LEVELS.info!;
  // An unknown level is passed on as it is, for the process's own configuration check to refuse.
  const logged = (LOG_LEVELS[asked] ?? 0) < info ? asked : 'info';
  const wanted = LOG_LEVELS[asked] ?? info;
  const child = spawnPlatform(target, { PORT: '0', OPS_PORT: '0', GRPC_PORT: '0', ...env, LOG_LEVEL: logged }, [], 'pipe');
  const recent: string[] = [];
  const ports = new Promise<{ port: number | undefined; opsPort: number }>((resolve, reject) => {
    const giveUp = setTimeout(() => reject(new Error(`platform process (--target=${target}) was not ready to serve within a minute${lastLines(recent)}`)), 60_000);
    // 'close': the process has exited and its output has all been read (a fatal line included).
    child.once('close', (code, signal) => {
      clearTimeout(giveUp);
      reject(new Error(`platform process (--target=${target}) exited with ${code ?? signal} before it was ready to serve${lastLines(recent)}`));
    });
    // Read to the end of the process's life, whatever is passed on: a full pipe would block its logging.
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const entry = parseLogLine(line);
      if (entry?.msg === 'ready to serve' && typeof entry.opsPort === 'number') {
        clearTimeout(giveUp);
        resolve({ port: typeof entry.port === 'number' ? entry.port : undefined, opsPort: entry.opsPort });
      }
      recent.push(line);
      if (recent.length > 20) recent.shift();
      const level = typeof entry?.level === 'string' ? (LOG_LEVELS[entry.level] ?? Infinity) : Infinity;
      if (level >= wanted) process.stdout.write(`${line}\n`);
    });
  });
  try {
    return { child, ...(await ports) };
  } catch (error) {
    await stopPlatformProcess(child);
    throw error;
  }
}

function parseLogLine(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

function lastLines(lines: readonly string[]): string {
  return lines.length === 0 ? '' : `; its last output:\n${lines.join('\n')}`;
}

/** An edge replica started by `startEdgeReplica`. */
export interface EdgeReplica {
  /** Absolute URL of a path on the replica's public listener. */
  url(pathname: string): string;
  /** Absolute URL of a path on the replica's ops listener (/healthz, /readyz, /metrics). */
  opsUrl(pathname: string): string;
  stop(): Promise<void>;
}

/** Every service's `<NAME>_SERVICE_ADDR` set to one gRPC address: an edge whose services all run in one process there. */
export function servicesAt(address: string): Record<string, string> {
  return Object.fromEntries(['IDENTITY', 'CATALOG', 'AGENTS', 'KNOWLEDGE', 'BILLING', 'NOTIFICATIONS'].map((name) => [`${name}_SERVICE_ADDR`, address]));
}

/**
 * A second edge (`--target=gateway`) beside a test platform on real infrastructure: the same database, Redis,
 * Kafka and keys, its services reached over the first platform's gRPC address. Requests may then land on either
 * replica, as behind a Kubernetes Service. It is a process of its own, so it learns of changes only as another pod
 * would (in the test's process it would share module state with the first platform: a change one replica learns
 * from a gRPC answer would move the other's views too). It binds port 0 and says which ports it got
 * (`spawnPlatformListening`). `env` overrides its own settings (e.g. its REDIS_URL).
 */
export async function startEdgeReplica(first: TestPlatform, env: NodeJS.ProcessEnv = {}): Promise<EdgeReplica> {
  const address = first.platform.grpcAddress;
  if (!address || first.env.DATABASE_URL === undefined) throw new Error('an edge replica needs a platform on real infrastructure');
  const { child, port, opsPort } = await spawnPlatformListening('gateway', { ...process.env, ...first.env, ...servicesAt(address), PORT: '0', OPS_PORT: '0', GRPC_PORT: '0', ...env });
  try {
    if (port === undefined) throw new Error('the edge replica reported no public port');
    await waitReady(`http://127.0.0.1:${opsPort}/readyz`, [child]);
  } catch (error) {
    await stopPlatformProcess(child);
    throw error;
  }
  return {
    url: (pathname) => `http://127.0.0.1:${port}${pathname}`,
    opsUrl: (pathname) => `http://127.0.0.1:${opsPort}${pathname}`,
    stop: () => stopPlatformProcess(child),
  };
}
