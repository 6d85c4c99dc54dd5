import path from 'node:path';
import type { KafkaSasl, KafkaTls } from '../bus/kafka-security';
import { kafkaSecurity } from './kafka-security';
import { environmentSchema, SERVICE_NAMES, type Environment, type ServiceName } from './schema';

/** Thrown when the environment cannot start the requested targets; its message lists every problem. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export interface PlatformConfig {
  env: Environment;
  /** True when embedded adapters (PGlite, in-process bus, in-memory cache) may be used: only `--target=all`. */
  embeddedAllowed: boolean;
  storage: { kind: 'postgres'; url: string; poolMax: number } | { kind: 'pglite'; dataDir: string };
  cache: { kind: 'redis'; url: string; keyPrefix: string } | { kind: 'memory'; keyPrefix: string };
  bus:
    | { kind: 'kafka'; brokers: string[]; clientId: string; topicPrefix: string; tls?: KafkaTls; sasl?: KafkaSasl }
    | { kind: 'memory'; topicPrefix: string };
  grpc: { host: string; port: number; deadlineMs: number };
  /** Explicit `<NAME>_SERVICE_ADDR` values; services hosted in this process are reached on its own gRPC server. */
  serviceAddresses: Partial<Record<ServiceName, string>>;
}

export function serviceAddressVariable(name: ServiceName): string {
  return `${name.toUpperCase()}_SERVICE_ADDR`;
}

/** Where the data lives: PostgreSQL at DATABASE_URL, else the embedded database under DATA_DIR. */
export function storageConfig(env: Environment): PlatformConfig['storage'] {
  return env.DATABASE_URL
    ? { kind: 'postgres', url: env.DATABASE_URL, poolMax: env.DATABASE_POOL_MAX }
    : { kind: 'pglite', dataDir: path.join(env.DATA_DIR, 'pg') };
}

/**
 * APP_URL as given, else this process's own address: a laptop that moves PORT off a taken 8080 keeps OAuth
 * metadata, gateway URLs and the Origin check pointing where the platform answers. PORT 0 (any free port, as tests
 * use) names no address in advance, so it keeps the schema's default.
 */
function appUrlOf(source: NodeJS.ProcessEnv, env: Environment): string {
  if (source.APP_URL?.trim() || env.PORT === 0) return env.APP_URL;
  return `http://localhost:${env.PORT}`;
}

/**
 * Reads and validates the environment. `embeddedAllowed` is decided by the caller (the entry point), from the
 * targets: every target other than `all` must run against real Postgres, Redis and Kafka.
 */
export function loadConfig(source: NodeJS.ProcessEnv, options: { embeddedAllowed: boolean }): PlatformConfig {
  const parsed = environmentSchema.safeParse(source);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`));
  }
  const env = { ...parsed.data, APP_URL: appUrlOf(source, parsed.data) };
  const problems: string[] = [];
  if (!options.embeddedAllowed) {
    const missing = [
      env.DATABASE_URL ? null : 'DATABASE_URL (PostgreSQL)',
      env.REDIS_URL ? null : 'REDIS_URL (Redis)',
      env.KAFKA_BROKERS?.length ? null : 'KAFKA_BROKERS (Kafka)',
    ].filter((m): m is string => m !== null);
    if (missing.length > 0) {
      problems.push(
        `targets other than "all" need real infrastructure; missing: ${missing.join(', ')}. ` +
          'Embedded storage, bus and cache serve --target=all only.',
      );
    }
  }
  if (env.DATABASE_URL && !env.ENCRYPTION_KEY) problems.push('ENCRYPTION_KEY is required when DATABASE_URL is set');
  if (env.DATABASE_URL && !env.API_KEY_PEPPER) problems.push('API_KEY_PEPPER is required when DATABASE_URL is set');
  const kafka = kafkaSecurity(env, problems);
  if (problems.length > 0) throw new ConfigError(problems);

  const serviceAddresses: Partial<Record<ServiceName, string>> = {};
  for (const name of SERVICE_NAMES) {
    const value = env[serviceAddressVariable(name) as keyof Environment];
    if (typeof value === 'string') serviceAddresses[name] = value;
  }

  return {
    env,
    embeddedAllowed: options.embeddedAllowed,
    storage: storageConfig(env),
    cache: env.REDIS_URL
      ? { kind: 'redis', url: env.REDIS_URL, keyPrefix: env.REDIS_KEY_PREFIX }
      : { kind: 'memory', keyPrefix: env.REDIS_KEY_PREFIX },
    bus: env.KAFKA_BROKERS?.length
      ? { kind: 'kafka', brokers: env.KAFKA_BROKERS, clientId: env.KAFKA_CLIENT_ID, topicPrefix: env.KAFKA_TOPIC_PREFIX, ...kafka }
      : { kind: 'memory', topicPrefix: env.KAFKA_TOPIC_PREFIX },
    grpc: {
      host: env.GRPC_HOST ?? (options.embeddedAllowed ? '127.0.0.1' : '0.0.0.0'),
      port: env.GRPC_PORT,
      deadlineMs: env.GRPC_DEADLINE_MS,
    },
    serviceAddresses,
  };
}
