import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createTestDatabase, uniquePrefix } from '@platform/test';
import type { RunningPlatform } from '../src/platform';

/** Environment for an embedded `--target=all` platform on ephemeral ports in a fresh data directory. */
export function embeddedEnv(): { env: NodeJS.ProcessEnv; cleanup(): void } {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-'));
  return {
    env: { DATA_DIR: dataDir, PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'silent' },
    cleanup: () => rmSync(dataDir, { recursive: true, force: true }),
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
    },
    cleanup: () => database.drop(),
  };
}

export function urlOf(platform: RunningPlatform, pathname: string): string {
  return `http://127.0.0.1:${platform.httpPort}${pathname}`;
}
