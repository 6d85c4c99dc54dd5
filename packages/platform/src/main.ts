import { parseArgs } from 'node:util';
import { ConfigError, createLogger, logProcessWarnings, onShutdownSignal } from '@platform/runtime';
import { createAdminCommand } from './commands/create-admin';
import { eventsCommand } from './commands/events';
import { migrateCommand } from './commands/migrate';
import { startPlatform } from './platform';

/** Commands that run once and exit instead of serving (`platform <command> …`); each returns the exit code. */
const COMMANDS = new Map<string, (args: string[]) => Promise<number>>([
  ['create-admin', createAdminCommand],
  ['events', eventsCommand],
  ['migrate', migrateCommand],
]);

/**
 * The one executable. `--target=all` (the default) runs every module in one process; `--target=identity`
 * (or a comma list) runs only those, for one service per pod.
 */
async function main(): Promise<void> {
  const command = COMMANDS.get(process.argv[2] ?? '');
  if (command) {
    process.exitCode = await command(process.argv.slice(3));
    return;
  }
  const { values } = parseArgs({
    options: { target: { type: 'string', default: process.env.TARGET ?? 'all' }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write('usage: platform [--target=all|gateway|identity|catalog|agents|knowledge|billing|notifications[,...]]\n');
    process.stdout.write('       platform create-admin --email <email>   (password from ADMIN_PASSWORD or stdin)\n');
    process.stdout.write('       platform migrate [--target=all|<service>[,...]] [--check]   (DATABASE_URL; --check applies nothing)\n');
    process.stdout.write('       platform events parked|replay|discard [--consumer <name>] [--event-id <id>]   (parked events; events --help)\n');
    return;
  }
  const platform = await startPlatform({ target: values.target });
  logProcessWarnings(platform.context.logger);
  // The whole stop's budget (each drain takes at most 40 % of it, platform.ts), and 5 s more before giving up.
  const budgetMs = platform.context.config.env.SHUTDOWN_TIMEOUT_SECONDS * 1000;
  onShutdownSignal(platform.stop, { logger: platform.context.logger, timeoutMs: budgetMs + 5_000 });
}

main().catch((error: unknown) => {
  const logger = createLogger();
  if (error instanceof ConfigError) logger.fatal({ problems: error.problems }, error.message);
  else logger.fatal({ err: error }, 'failed to start');
  process.exit(1);
});
