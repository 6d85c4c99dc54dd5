import { parseArgs } from 'node:util';
import {
  AppError,
  createCache,
  createDatabase,
  createLogger,
  loadConfig,
  loadSecrets,
  migrateService,
} from '@platform/runtime';
import { createOrResetAdmin, identityService, type IdentityDeps } from '@platform/identity';

/**
 * `platform create-admin --email someone@example.com`: creates a platform admin, or resets an existing person's
 * password, makes them admin and reactivates them. The password comes from ADMIN_PASSWORD or stdin (piped or
 * typed), never from the command line, where other users of the machine could read it. Uses the server's own
 * configuration (DATABASE_URL, or the embedded database under DATA_DIR; REDIS_URL) and applies identity's migrations
 * first.
 */
export async function createAdminCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { email: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: false });
  if (values.help || !values.email) {
    process.stderr.write('usage: platform create-admin --email <email>   (password from ADMIN_PASSWORD or stdin)\n');
    return values.help ? 0 : 2;
  }
  const password = process.env.ADMIN_PASSWORD || (await readPassword());
  if (!password) {
    process.stderr.write('create-admin: no password given; set ADMIN_PASSWORD or pipe it on stdin\n');
    return 2;
  }

  const config = loadConfig(process.env, { embeddedAllowed: !process.env.DATABASE_URL });
  const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'warn' });
  const db = createDatabase(config.storage, logger, 'platform-create-admin');
  // The server's own cache (Redis when configured), so a reset reaches running edges at once (auth generation).
  const cache = createCache(config.cache, logger);
  try {
    await migrateService(db, { schema: identityService.name, dir: identityService.migrationsDir, logger });
    const secrets = await loadSecrets({
      encryptionKey: config.env.ENCRYPTION_KEY,
      apiKeyPepper: config.env.API_KEY_PEPPER,
      dataDir: config.env.DATA_DIR,
      embedded: config.storage.kind === 'pglite',
      logger,
    });
    const deps: IdentityDeps = { db, secrets, cache, logger, config };
    const { created, personId } = await createOrResetAdmin(deps, values.email, password);
    process.stdout.write(`${created ? 'created' : 'reset'} platform admin ${values.email} (${personId})\n`);
    return 0;
  } catch (error) {
    if (error instanceof AppError) {
      process.stderr.write(`create-admin: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await cache.close();
    await db.close();
  }
}

/** The first line of stdin; prompts (without echo) when stdin is a terminal. */
async function readPassword(): Promise<string> {
  const stdin = process.stdin;
  if (stdin.isTTY) return promptHidden('Password: ');
  let text = '';
  stdin.setEncoding('utf8');
  for await (const chunk of stdin) text += chunk as string;
  return text.split(/\r?\n/)[0] ?? '';
}

function promptHidden(question: string): Promise<string> {
  return new Promise((resolve) => {
    const stdin = process.stdin;
    process.stderr.write(question);
    stdin.setRawMode(true);
    stdin.setEncoding('utf8');
    let value = '';
    const onData = (key: string) => {
      for (const char of key) {
        if (char === '\r' || char === '\n' || char === '\u0004') {
          stdin.setRawMode(false);
          stdin.pause();
          stdin.off('data', onData);
          process.stderr.write('\n');
          resolve(value);
          return;
        }
        if (char === '\u0003') process.exit(130);
        if (char === '\u007f') value = value.slice(0, -1);
        else value += char;
      }
    };
    stdin.on('data', onData);
    stdin.resume();
  });
}
