import { parseArgs } from 'node:util';
import {
  ConfigError,
  createDatabase,
  createLogger,
  DatabaseUnavailableError,
  environmentSchema,
  migrateService,
  pendingServiceMigrations,
  SERVICE_NAMES,
  type Database,
  type Logger,
  type ServiceName,
} from '@platform/runtime';
import { SERVICES } from '../services';
import { parseTargets } from '../targets';

const USAGE = 'usage: platform migrate [--target=all|identity|catalog|agents|knowledge|billing|notifications[,...]] [--check]\n';

/** Exit codes: what a Job, an init container or a CI gate tells apart. */
export const MIGRATE_EXIT = { done: 0, failed: 1, usage: 2, pending: 3 } as const;

/**
 * `platform migrate [--target=…] [--check]`: applies the pending migrations of the services of `--target` (every
 * service by default; the gateway has no schema) to DATABASE_URL and exits, for a Kubernetes Job ahead of a rollout
 * (deploy/README.md, Migrations). It takes the advisory lock per schema a starting process takes (migrate.ts), so it
 * is safe beside processes migrating at start, and starts nothing else: no gRPC, HTTP, cache, bus or relays. An
 * embedded database (PGlite under DATA_DIR) is refused: it belongs to the one process that serves it, which
 * migrates it at start. `--check` applies nothing and exits 3 while a migration is pending.
 */
export async function migrateCommand(args: string[]): Promise<number> {
  let options: { target: string; check: boolean; help: boolean };
  try {
    const { values } = parseArgs({
      args,
      options: { target: { type: 'string', default: 'all' }, check: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } },
      allowPositionals: false,
    });
    options = values;
  } catch (error) {
    return usage(error instanceof Error ? error.message : String(error));
  }
  if (options.help) {
    process.stdout.write(USAGE);
    return MIGRATE_EXIT.done;
  }

  let services: ServiceName[];
  try {
    const { modules } = parseTargets(options.target);
    services = SERVICE_NAMES.filter((name) => modules.includes(name));
  } catch (error) {
    return usage(error instanceof Error ? error.message : String(error));
  }
  if (services.length === 0) return usage('the gateway has no schema to migrate; name a service target, or all');

  // The environment only: nothing here needs ENCRYPTION_KEY, Redis or Kafka, so a CI gate can run it with just a URL.
  const parsed = environmentSchema.safeParse(process.env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`);
    return usage(new ConfigError(problems).message);
  }
  const env = parsed.data;
  if (!env.DATABASE_URL) {
    return usage(
      'DATABASE_URL is not set: migrate applies migrations to PostgreSQL. An embedded database (DATA_DIR) belongs to the one process that serves it, which migrates it at start',
    );
  }

  const logger = createLogger({ level: env.LOG_LEVEL });
  const db = createDatabase({ kind: 'postgres', url: env.DATABASE_URL, poolMax: env.DATABASE_POOL_MAX }, logger, 'platform-migrate');
  let schema: string | undefined;
  try {
    const pending: string[] = [];
    for (const name of services) {
      const { name: serviceSchema, migrationsDir: dir } = SERVICES[name];
      schema = serviceSchema;
      if (options.check) {
        const ids = await pendingServiceMigrations(db, { schema, dir });
        if (ids.length > 0) logger.warn({ schema, pending: ids }, 'migrations pending');
        else logger.info({ schema }, 'no migrations pending');
        pending.push(...ids.map((id) => `${serviceSchema}/${id}`));
      } else {
        await migrateSchema(db, schema, dir, logger.child({ service: name }));
      }
    }
    if (pending.length > 0) {
      process.stderr.write(`migrate --check: ${pending.length} migration(s) pending: ${pending.join(', ')}\n`);
      return MIGRATE_EXIT.pending;
    }
    return MIGRATE_EXIT.done;
  } catch (error) {
    // Errors from the db module carry no bound values, and pg's connection errors never include the URL.
    logger.error({ schema, err: error }, 'migrate failed');
    // An outage's error says only "unavailable" (it may reach API clients); an operator here needs its cause.
    const shown = error instanceof DatabaseUnavailableError && error.cause instanceof Error ? error.cause : error;
    const message = shown instanceof Error ? shown.message : String(shown);
    process.stderr.write(`migrate: ${schema ? `schema ${schema}: ` : ''}${message}\n`);
    return MIGRATE_EXIT.failed;
  } finally {
    await db.close();
  }
}

/** One schema under its advisory lock; each migration applied is logged by `migrate`, and the schema's outcome here. */
async function migrateSchema(db: Database, schema: string, dir: string, logger: Logger): Promise<void> {
  const applied = await migrateService(db, { schema, dir, logger });
  if (applied.length > 0) logger.info({ schema, applied }, 'migrations applied');
  else logger.info({ schema }, 'no migrations pending');
}

function usage(problem: string): number {
  process.stderr.write(`migrate: ${problem}\n${USAGE}`);
  return MIGRATE_EXIT.usage;
}
