import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from '../logging/logger';
import { Digester } from './digester';
import { CryptoError } from './errors';
import { DEFAULT_KEY_ID, KEY_BYTES } from './key-ring';
import { SecretBox } from './secret-box';

export const SECRETS_FILE_NAME = 'secrets.json';

export interface LoadSecretsOptions {
  /** ENCRYPTION_KEY, when set. */
  encryptionKey?: string | undefined;
  /** API_KEY_PEPPER, when set. */
  apiKeyPepper?: string | undefined;
  /** DATA_DIR: where generated secrets are kept when `embedded`. */
  dataDir: string;
  /** True for `--target=all` on embedded storage: the only case where secrets may be generated. */
  embedded: boolean;
  logger: Logger;
}

export interface Secrets {
  secretBox: SecretBox;
  digester: Digester;
}

/** What `<dataDir>/secrets.json` holds: values in the same form as the variables. */
interface StoredSecrets {
  encryptionKey?: string;
  apiKeyPepper?: string;
}

const VARIABLES = { encryptionKey: 'ENCRYPTION_KEY', apiKeyPepper: 'API_KEY_PEPPER' } as const;
type SecretName = keyof typeof VARIABLES;

const GENERATORS: Record<SecretName, () => string> = {
  encryptionKey: () => `${DEFAULT_KEY_ID}:${randomBytes(KEY_BYTES).toString('base64')}`,
  apiKeyPepper: () => randomBytes(32).toString('base64'),
};

/**
 * Builds the SecretBox and Digester from ENCRYPTION_KEY and API_KEY_PEPPER. A missing value is an error,
 * except when embedded (a local, single-process install): then a strong value is generated once into
 * `<dataDir>/secrets.json` (mode 0600) and reused on later starts, because a new key on each start would make
 * everything encrypted before it unreadable. Such keys sit beside the data they protect, so a warning says so.
 */
export async function loadSecrets(options: LoadSecretsOptions): Promise<Secrets> {
  const given: StoredSecrets = {};
  if (options.encryptionKey) given.encryptionKey = options.encryptionKey;
  if (options.apiKeyPepper) given.apiKeyPepper = options.apiKeyPepper;
  const missing = (Object.keys(VARIABLES) as SecretName[]).filter((name) => given[name] === undefined);

  if (missing.length > 0 && !options.embedded) {
    const names = missing.map((name) => VARIABLES[name]).join(' and ');
    throw new CryptoError(
      'missing_secret',
      `${names} must be set: secrets are generated only for the embedded single-process mode (--target=all without ` +
        'DATABASE_URL). Generate each with: openssl rand -base64 32',
    );
  }

  let values = given as Required<StoredSecrets>;
  if (missing.length > 0) {
    const file = join(options.dataDir, SECRETS_FILE_NAME);
    const stored = await loadOrGenerate(file, missing);
    values = { ...stored, ...given } as Required<StoredSecrets>;
    options.logger.warn(
      { file, variables: missing.map((name) => VARIABLES[name]) },
      `Using generated secrets from ${file}: they are for local use only. Set ${missing.map((name) => VARIABLES[name]).join(' and ')} ` +
        'for any shared or production install, and keep the file if data was encrypted with it.',
    );
  }

  return { secretBox: SecretBox.fromKeyRing(values.encryptionKey), digester: Digester.fromPepper(values.apiKeyPepper) };
}

/** Reads the secrets file, adding any of `names` it lacks. An unreadable file is an error, never overwritten. */
async function loadOrGenerate(file: string, names: SecretName[]): Promise<StoredSecrets> {
  const existing = await readSecretsFile(file);
  const lacking = names.filter((name) => !existing?.[name]);
  if (existing && lacking.length === 0) return existing;

  const next: StoredSecrets = { ...existing };
  for (const name of lacking) next[name] = GENERATORS[name]();
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  if (!existing) {
    try {
      // 'wx' fails if another process created the file meanwhile; then its values win and are reused.
      await writeFile(file, serialise(next), { mode: 0o600, flag: 'wx' });
      return next;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      return loadOrGenerate(file, names);
    }
  }
  // Adding to an existing file: write beside it and rename, so a crash never leaves a half-written file.
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, serialise(next), { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, file);
  return next;
}

async function readSecretsFile(file: string): Promise<StoredSecrets | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const valid =
    typeof parsed === 'object' &&
    parsed !== null &&
    !Array.isArray(parsed) &&
    (Object.keys(VARIABLES) as SecretName[]).every((name) => {
      const value = (parsed as Record<string, unknown>)[name];
      return value === undefined || typeof value === 'string';
    });
  if (!valid) {
    throw new CryptoError(
      'malformed_secrets_file',
      `${file} is not a valid secrets file; fix or restore it (replacing it would make encrypted data unreadable)`,
    );
  }
  return parsed as StoredSecrets;
}

function serialise(secrets: StoredSecrets): string {
  return `${JSON.stringify(secrets, null, 2)}\n`;
}
