import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { Client } from 'pg';
import { createClient } from 'redis';

/**
 * Real infrastructure for tests. URLs come from TEST_POSTGRES_URL, TEST_REDIS_URL and TEST_KAFKA_BROKERS, and the
 * same broker's SASL_SSL listener from TEST_KAFKA_SASL_SSL_BROKERS with TEST_KAFKA_CA_FILE, TEST_KAFKA_SASL_USERNAME
 * and TEST_KAFKA_SASL_PASSWORD, and its mutual-TLS listener from TEST_KAFKA_SSL_BROKERS with TEST_KAFKA_CA_FILE,
 * TEST_KAFKA_CLIENT_CERT_FILE and TEST_KAFKA_CLIENT_KEY_FILE (deploy/provision.sh prints them). Under CI a missing one fails the test; on a laptop
 * the test is skipped with a note, so `npm test` runs with nothing but Node.
 */
export type InfraKind = 'postgres' | 'redis' | 'kafka' | 'kafka-sasl-ssl' | 'kafka-mtls';

const VARIABLES: Record<InfraKind, string> = {
  postgres: 'TEST_POSTGRES_URL',
  redis: 'TEST_REDIS_URL',
  kafka: 'TEST_KAFKA_BROKERS',
  'kafka-sasl-ssl': 'TEST_KAFKA_SASL_SSL_BROKERS',
  'kafka-mtls': 'TEST_KAFKA_SSL_BROKERS',
};

/** What a kind needs besides its URL; deploy/provision.sh writes them together. */
const COMPANIONS: Partial<Record<InfraKind, string[]>> = {
  'kafka-sasl-ssl': ['TEST_KAFKA_CA_FILE', 'TEST_KAFKA_SASL_USERNAME', 'TEST_KAFKA_SASL_PASSWORD'],
  'kafka-mtls': ['TEST_KAFKA_CA_FILE', 'TEST_KAFKA_CLIENT_CERT_FILE', 'TEST_KAFKA_CLIENT_KEY_FILE'],
};

function missingVariables(kind: InfraKind): string[] {
  return [VARIABLES[kind], ...(COMPANIONS[kind] ?? [])].filter((name) => !process.env[name]);
}

export function isCI(): boolean {
  return Boolean(process.env.CI) && process.env.CI !== 'false';
}

/** The URL of a real service, or undefined when it is not configured outside CI. Throws under CI. */
export function infraUrl(kind: InfraKind): string | undefined {
  const missing = missingVariables(kind);
  if (missing.length === 0) return process.env[VARIABLES[kind]];
  if (isCI()) {
    throw new Error(`${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not set: CI must run this test against a real ${kind} (see deploy/provision.sh)`);
  }
  return undefined;
}

/** The SASL_SSL listener's CA file and user (TEST_KAFKA_CA_FILE, …), for a test under `describeWith('kafka-sasl-ssl')`. */
export function kafkaSaslSslCredentials(): { caFile: string; username: string; password: string } {
  if (infraUrl('kafka-sasl-ssl') === undefined) throw new Error(`${missingVariables('kafka-sasl-ssl').join(', ')} not set`);
  return {
    caFile: process.env.TEST_KAFKA_CA_FILE!,
    username: process.env.TEST_KAFKA_SASL_USERNAME!,
    password: process.env.TEST_KAFKA_SASL_PASSWORD!,
  };
}

/** The mutual-TLS listener's CA file and test client (TEST_KAFKA_CLIENT_*), for a test under `describeWith('kafka-mtls')`. */
export function kafkaMtlsClient(): { caFile: string; certFile: string; keyFile: string } {
  if (infraUrl('kafka-mtls') === undefined) throw new Error(`${missingVariables('kafka-mtls').join(', ')} not set`);
  return { caFile: process.env.TEST_KAFKA_CA_FILE!, certFile: process.env.TEST_KAFKA_CLIENT_CERT_FILE!, keyFile: process.env.TEST_KAFKA_CLIENT_KEY_FILE! };
}

/**
 * `describe` that runs only when `kind` is available; under CI it always runs, and a missing URL fails it.
 * The body receives the URL.
 */
export function describeWith(kind: InfraKind, name: string, body: (url: () => string) => void): void {
  let url: string | undefined;
  try {
    url = infraUrl(kind);
  } catch (error) {
    describe(name, () => {
      it(`needs ${kind}`, () => {
        throw error;
      });
    });
    return;
  }
  if (url === undefined) {
    describe.skip(`${name} (skipped: ${missingVariables(kind).join(', ')} not set)`, () => body(() => ''));
    return;
  }
  const resolved = url;
  describe(name, () => body(() => resolved));
}

/** Creates an empty database on the test Postgres server; `drop` removes it. */
export async function createTestDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `test_${randomUUID().replace(/-/g, '')}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A unique prefix for Kafka topics, consumer groups and Redis keys, so parallel tests never share state. */
export function uniquePrefix(label: string): string {
  return `t-${label}-${randomUUID().slice(0, 8)}.`;
}

/**
 * Deletes the Kafka topics and consumer groups named with `prefix` (see `uniquePrefix`) once a test is done with
 * them: every test platform makes a few topics of its own, and a local broker that keeps them all grows without end
 * (thousands of partitions slow its start and fill its disk). Best effort: a failure is reported, never thrown, since
 * it says nothing about the test.
 */
export async function deleteKafkaState(brokers: string, prefix: string): Promise<void> {
  if (!prefix.startsWith('t-')) throw new Error(`refusing to delete Kafka state outside a test prefix: ${prefix}`);
  const admin = new Kafka({ clientId: 'test-cleanup', brokers: brokers.split(','), logLevel: logLevel.NOTHING }).admin();
  try {
    await admin.connect();
    const groups = (await admin.listGroups()).groups.map((group) => group.groupId).filter((id) => id.startsWith(prefix));
    if (groups.length > 0) await admin.deleteGroups(groups);
    const topics = (await admin.listTopics()).filter((topic) => topic.startsWith(prefix));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 10_000 });
  } catch (error) {
    process.stderr.write(`could not delete the Kafka topics and groups of ${prefix}: ${error instanceof Error ? error.message : String(error)}\n`);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * Kills (CLIENT KILL ID) every connection to the Redis at `url` named `name` (see runtime `connectionName`), as a
 * network failure or an operator would; returns how many. Naming them keeps other tests' connections alive.
 */
export async function killRedisConnections(url: string, name: string): Promise<number> {
  const admin = createClient({ url });
  await admin.connect();
  try {
    const list = String(await admin.sendCommand(['CLIENT', 'LIST']));
    const ids = list
      .split('\n')
      .filter((line) => line.includes(` name=${name} `))
      .map((line) => /\bid=(\d+)/.exec(line)?.[1])
      .filter((id): id is string => id !== undefined);
    for (const id of ids) await admin.sendCommand(['CLIENT', 'KILL', 'ID', id]);
    return ids.length;
  } finally {
    await admin.close();
  }
}
