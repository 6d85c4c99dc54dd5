import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { SERVICE_NAMES, serviceMigrations } from '@platform/runtime';
import { createTestDatabase, describeWith, expectEventually, freePort, memoryLogger, runPlatformCommand, type CommandRun, type LogLine } from '@platform/test';
import { startPlatform, type RunningPlatform } from '../src/platform';
import { SERVICES } from '../src/services';


interface Run extends CommandRun {
  /** stdout's JSON log lines. */
  lines: LogLine[];
}

/** Runs `platform migrate …` as the image does: a process of its own, with only the environment given. */
async function runMigrate(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  const run = await runPlatformCommand('migrate', args, env);
  const lines = run.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
  return { ...run, lines };
}

/** Every migration of each service, in the order it applies them. */
async function expectedMigrations(): Promise<Record<string, string[]>> {
  const entries = await Promise.all(
    SERVICE_NAMES.map(async (name) => [name, (await serviceMigrations(name, SERVICES[name].migrationsDir)).map((m) => m.id)] as const),
  );
  return Object.fromEntries(entries);
}

/** The ids recorded in each existing service schema's schema_migrations; a schema that does not exist is absent. */
async function recorded(databaseUrl: string): Promise<Record<string, string[]>> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const result: Record<string, string[]> = {};
    for (const schema of SERVICE_NAMES) {
      const table = await client.query(`SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'schema_migrations'`, [schema]);
      if (table.rowCount === 0) continue;
      const { rows } = await client.query<{ id: string }>(`SELECT id FROM ${schema}.schema_migrations ORDER BY applied_at, id`);
      result[schema] = rows.map((row) => row.id);
    }
    return result;
  } finally {
    await client.end();
  }
}

/** schema -> the ids logged as applied, in order. */
function appliedIn(lines: readonly LogLine[]): Record<string, string[]> {
  const applied: Record<string, string[]> = {};
  for (const line of lines.filter((l) => l.msg === 'migration applied')) (applied[line.schema as string] ??= []).push(line.migration as string);
  return applied;
}

const sorted = (record: Record<string, string[]>) => Object.fromEntries(Object.entries(record).map(([k, v]) => [k, [...v].sort()]));

/** What the command may log: migrations, per schema, and nothing of a server (listeners, bus, cache, relays). */
const COMMAND_MESSAGES = ['migration applied', 'migrations applied', 'migrations pending', 'no migrations pending'];

/** A serving platform's environment on `url`, with keys of its own and ports picked by the system. */
function platformEnvOn(url: string): NodeJS.ProcessEnv {
  return {
    DATABASE_URL: url,
    ENCRYPTION_KEY: `k1:${randomBytes(32).toString('base64')}`,
    API_KEY_PEPPER: randomBytes(32).toString('base64'),
    PORT: '0',
    OPS_PORT: '0',
    GRPC_PORT: '0',
  };
}

describe('migrate command without a usable database', () => {
  it('refuses to run without DATABASE_URL, saying why, and touches no embedded database', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'migrate-'));
    try {
      // Side by side: each run is a process that takes seconds to load, and neither may change anything.
      for (const run of await Promise.all([[], ['--check']].map((args) => runMigrate(args, { DATA_DIR: dataDir })))) {
        expect(run.code).toBe(2);
        expect(run.stderr).toMatch(/^migrate: DATABASE_URL is not set: migrate applies migrations to PostgreSQL\. An embedded database \(DATA_DIR\)/);
        expect(run.stdout).toBe('');
      }
      expect(readdirSync(dataDir)).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses targets without a schema, unknown targets and unknown options', async () => {
    const env = { DATABASE_URL: 'postgres://migrator@127.0.0.1:1/none' };
    const [gateway, unknown, option] = await Promise.all([runMigrate(['--target=gateway'], env), runMigrate(['--target=identity,billingz'], env), runMigrate(['--dry-run'], env)]);
    expect([gateway.code, gateway.stderr]).toEqual([2, expect.stringContaining('the gateway has no schema to migrate')]);
    expect([unknown.code, unknown.stderr]).toEqual([2, expect.stringContaining('unknown target "billingz"')]);
    expect([option.code, option.stderr]).toEqual([2, expect.stringContaining("Unknown option '--dry-run'")]);
  }, 60_000);

  it('fails with the reason when the database is unreachable, never showing the URL or its password', async () => {
    const password = `pw-${randomBytes(8).toString('hex')}`;
    const url = `postgres://migrator:${password}@127.0.0.1:${await freePort()}/platform`;
    for (const run of await Promise.all([[], ['--check']].map((args) => runMigrate(args, { DATABASE_URL: url })))) {
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^migrate: schema identity: connect ECONNREFUSED/);
      expect(run.lines.map((line) => line.msg)).toEqual(['migrate failed']);
      expect(run.stdout + run.stderr).not.toContain(password);
    }
  }, 60_000);
});

describeWith('postgres', 'migrate command', (postgresUrl) => {
  let database: { url: string; drop(): Promise<void> };
  let expected: Record<string, string[]>;
  // Redis and Kafka at closed ports: the command must need neither (a connection attempt would log, or fail it).
  const env = () => ({ DATABASE_URL: database.url, REDIS_URL: 'redis://127.0.0.1:1', KAFKA_BROKERS: '127.0.0.1:1' });

  beforeAll(async () => {
    database = await createTestDatabase(postgresUrl());
    expected = await expectedMigrations();
  });
  afterAll(async () => database?.drop());

  it('--check: exits 3 naming every pending migration, and applies nothing', async () => {
    const run = await runMigrate(['--check'], env());
    expect(run.code).toBe(3);
    expect(run.lines.every((line) => COMMAND_MESSAGES.includes(line.msg!))).toBe(true);
    const pending = Object.fromEntries(run.lines.filter((l) => l.msg === 'migrations pending').map((l) => [l.schema, l.pending]));
    expect(pending).toEqual(expected);
    expect(run.stderr).toContain(`migrate --check: ${Object.values(expected).flat().length} migration(s) pending: identity/runtime_0001_outbox`);
    expect(await recorded(database.url)).toEqual({});
  }, 60_000);

  it("applies every migration of the named services, and only theirs, logging each and each schema's outcome", async () => {
    const run = await runMigrate(['--target=identity,catalog'], env());
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.lines.every((line) => COMMAND_MESSAGES.includes(line.msg!))).toBe(true);
    const mine = { identity: expected.identity!, catalog: expected.catalog! };
    expect(sorted(await recorded(database.url))).toEqual(sorted(mine));
    expect(appliedIn(run.lines)).toEqual(mine);
    const outcomes = run.lines.filter((l) => l.msg === 'migrations applied').map((l) => [l.schema, l.applied]);
    expect(outcomes).toEqual([['identity', mine.identity], ['catalog', mine.catalog]]);
  }, 60_000);

  it('applies the rest with the default target, one line per schema with nothing pending, and nothing on a second run', async () => {
    const rest = await runMigrate([], env());
    expect(rest.code).toBe(0);
    expect(sorted(await recorded(database.url))).toEqual(sorted(expected));
    expect(Object.keys(appliedIn(rest.lines))).toEqual(['agents', 'knowledge', 'billing', 'notifications']);
    expect(rest.lines.filter((l) => l.msg === 'no migrations pending').map((l) => l.schema)).toEqual(['identity', 'catalog']);

    const again = await runMigrate([], env());
    expect([again.code, again.stderr]).toEqual([0, '']);
    expect(again.lines.map((l) => [l.msg, l.schema])).toEqual(SERVICE_NAMES.map((schema) => ['no migrations pending', schema]));
  }, 60_000);

  it('--check: exits 0 once nothing is pending', async () => {
    const run = await runMigrate(['--check'], env());
    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(run.lines.map((l) => [l.msg, l.schema])).toEqual(SERVICE_NAMES.map((schema) => ['no migrations pending', schema]));
  }, 60_000);

  it('leaves a process started afterwards nothing to migrate', async () => {
    const before = await recorded(database.url);
    const log = memoryLogger('after-migrate');
    const platform = await startPlatform({
      target: 'all',
      logger: log.logger,
      env: platformEnvOn(database.url),
    });
    try {
      expect(log.lines.some((l) => l.msg === 'ready to serve')).toBe(true);
      expect(log.lines.filter((l) => l.msg === 'migration applied')).toEqual([]);
      expect(await recorded(database.url)).toEqual(before);
    } finally {
      await platform.stop();
    }
  }, 60_000);

  it('refuses a migration edited after it was applied, in both modes, changing nothing', async () => {
    const client = new Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query(`UPDATE billing.schema_migrations SET checksum = 'edited-' || checksum WHERE id = '0001_init'`);
      // Side by side, as two operators might: neither may change anything.
      for (const run of await Promise.all([[], ['--check']].map((args) => runMigrate(args, env())))) {
        expect(run.code).toBe(1);
        expect(run.stderr).toBe('migrate: schema billing: migration 0001_init of schema billing was edited after it was applied; add a new migration instead\n');
      }
      expect(sorted(await recorded(database.url))).toEqual(sorted(expected));
    } finally {
      await client.query(`UPDATE billing.schema_migrations SET checksum = substr(checksum, 8) WHERE id = '0001_init'`);
      await client.end();
    }
  }, 60_000);
});

/**
 * Beside serving processes: the command takes the advisory lock a starting process takes per schema. A session holds
 * identity's lock, as a process applying its migrations would, until both the command and a starting platform wait for
 * it; then they race for every schema, and each migration is applied once between them.
 */
describeWith('postgres', 'migrate command beside a starting process', (postgresUrl) => {
  let database: { url: string; drop(): Promise<void> };
  let platform: RunningPlatform | undefined;
  beforeAll(async () => {
    database = await createTestDatabase(postgresUrl());
  });
  afterAll(async () => {
    await platform?.stop();
    await database?.drop();
  });

  it('waits for the lock and applies each migration once between them', async () => {
    const holder = new Client({ connectionString: database.url, application_name: 'test-lock-holder' });
    await holder.connect();
    const waiting = async () =>
      (
        await holder.query<{ application_name: string }>(
          `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND NOT l.granted AND a.datname = current_database() ORDER BY 1`,
        )
      ).rows.map((row) => row.application_name);
    let released = false;
    try {
      await holder.query(`SELECT pg_advisory_lock(hashtextextended('migrate:identity', 0))`);
      const command = runMigrate([], { DATABASE_URL: database.url });
      await expectEventually(async () => expect(await waiting()).toEqual(['platform-migrate']), 60_000);
      const log = memoryLogger('beside-migrate');
      const starting = startPlatform({
        target: 'all',
        logger: log.logger,
        env: platformEnvOn(database.url),
      });
      await expectEventually(async () => expect(await waiting()).toEqual(['mcp-platform', 'platform-migrate']), 60_000);
      await holder.query(`SELECT pg_advisory_unlock(hashtextextended('migrate:identity', 0))`);
      released = true;
      const [run, started] = await Promise.all([command, starting]);
      platform = started;
      expect([run.code, run.stderr]).toEqual([0, '']);

      const expected = await expectedMigrations();
      const byCommand = appliedIn(run.lines);
      const byPlatform = appliedIn(log.lines);
      for (const schema of SERVICE_NAMES) {
        const both = [...(byCommand[schema] ?? []), ...(byPlatform[schema] ?? [])];
        expect([schema, both.sort()]).toEqual([schema, [...expected[schema]!].sort()]);
      }
      expect(sorted(await recorded(database.url))).toEqual(sorted(expected));
    } finally {
      if (!released) await holder.query(`SELECT pg_advisory_unlock_all()`);
      await holder.end();
    }
  }, 120_000);
});
