import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startPlatform, type RunningPlatform } from '@platform/platform/src/platform';
import { createTestDatabase, deleteKafkaState, infraUrl, uniquePrefix } from './infra';
import { freePort } from './net';
import { spawnPlatform, stopPlatformProcess, waitReady } from './platform-process';

/** Environment for an embedded `--target=all` platform on ephemeral ports in a fresh data directory. */
export function embeddedEnv(): { env: NodeJS.ProcessEnv; cleanup(): Promise<void> } {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-'));
  return {
    env: { DATA_DIR: dataDir, PORT: '0', OPS_PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'silent' },
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
 */
export async function startTestPlatform(options: { env?: NodeJS.ProcessEnv; embedded?: boolean } = {}): Promise<TestPlatform> {
  const postgres = options.embedded ? undefined : infraUrl('postgres');
  const infra = postgres
    ? await realInfraEnv({ postgres, redis: infraUrl('redis')!, kafka: infraUrl('kafka')! })
    : embeddedEnv();
  const env: NodeJS.ProcessEnv = {
    ...infra.env,
    BOOTSTRAP_ADMIN_EMAIL: TEST_ADMIN.email,
    BOOTSTRAP_ADMIN_PASSWORD: TEST_ADMIN.password,
    ...options.env,
  };
  let platform: RunningPlatform;
  try {
    platform = await startPlatform({ target: 'all', env });
  } catch (error) {
    await infra.cleanup();
    throw error;
  }
  const appUrl = platform.context.config.env.APP_URL;
  return {
    platform,
    env,
    url: (pathname) => platformUrl(platform, pathname),
    opsUrl: (pathname) => platformOpsUrl(platform, pathname),
    origin: new URL(appUrl).origin,
    appUrl,
    async stop() {
      await platform.stop();
      await infra.cleanup();
    },
  };
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

/**
 * A second edge (`--target=gateway`) beside a test platform on real infrastructure: the same database, Redis,
 * Kafka and keys, its services reached over the first platform's gRPC address. Requests may then land on either
 * replica, as behind a Kubernetes Service. It is a process of its own, so it learns of changes only as another pod
 * would (in the test's process it would share module state with the first platform: a change one replica learns
 * from a gRPC answer would move the other's views too). `env` overrides its own settings (e.g. its REDIS_URL).
 */
export async function startEdgeReplica(first: TestPlatform, env: NodeJS.ProcessEnv = {}): Promise<{ url(pathname: string): string; stop(): Promise<void> }> {
  const address = first.platform.grpcAddress;
  if (!address || first.env.DATABASE_URL === undefined) throw new Error('an edge replica needs a platform on real infrastructure');
  const addresses = Object.fromEntries(['IDENTITY', 'CATALOG', 'AGENTS', 'KNOWLEDGE', 'BILLING', 'NOTIFICATIONS'].map((name) => [`${name}_SERVICE_ADDR`, address]));
  const [port, opsPort] = [await freePort(), await freePort()];
  const child = spawnPlatform('gateway', { ...process.env, ...first.env, ...addresses, PORT: String(port), OPS_PORT: String(opsPort), GRPC_PORT: '0', ...env });
  const url = (pathname: string) => `http://127.0.0.1:${port}${pathname}`;
  try {
    await waitReady(`http://127.0.0.1:${opsPort}/readyz`, [child]);
  } catch (error) {
    await stopPlatformProcess(child);
    throw error;
  }
  return { url, stop: () => stopPlatformProcess(child) };
}
