import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CryptoError } from '../../src/crypto/errors';
import { loadSecrets } from '../../src/crypto/load-secrets';
import { SecretBox } from '../../src/crypto/secret-box';
import { createLogger } from '../../src/logging/logger';

function capturingLogger(): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  return { logger: createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } }), lines };
}

describe('loadSecrets', () => {
  let root: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'secrets-test-'));
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('generates both secrets once when embedded, keeps them private, and reuses them', async () => {
    const dataDir = join(root, 'nested', 'data');
    const first = capturingLogger();
    const secrets = await loadSecrets({ dataDir, embedded: true, logger: first.logger });

    const file = join(dataDir, 'secrets.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(await readFile(file, 'utf8')) as { encryptionKey: string; apiKeyPepper: string };
    expect(stored.encryptionKey).toMatch(/^k1:/);
    expect(Buffer.from(stored.encryptionKey.slice(3), 'base64')).toHaveLength(32);
    expect(Buffer.from(stored.apiKeyPepper, 'base64').length).toBeGreaterThanOrEqual(32);

    const warning = first.lines.join('');
    expect(warning).toContain('"level":"warn"');
    expect(warning).toContain('local use only');
    expect(warning).toContain('ENCRYPTION_KEY');
    expect(warning).toContain('API_KEY_PEPPER');
    expect(warning).not.toContain(stored.encryptionKey.slice(3));
    expect(warning).not.toContain(stored.apiKeyPepper);

    const ciphertext = secrets.secretBox.encrypt('survives restarts', 'row-1');
    const digest = secrets.digester.digest('api-key');

    const again = capturingLogger();
    const restarted = await loadSecrets({ dataDir, embedded: true, logger: again.logger });
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(stored);
    expect(restarted.secretBox.decrypt(ciphertext, 'row-1')).toBe('survives restarts');
    expect(restarted.digester.digest('api-key')).toBe(digest);
    expect(again.lines.join('')).toContain('local use only');
  });

  it('generates only what is missing and uses what is given', async () => {
    const encryptionKey = `k7:${randomBytes(32).toString('base64')}`;
    const { logger, lines } = capturingLogger();
    const secrets = await loadSecrets({ encryptionKey, dataDir: root, embedded: true, logger });

    const stored = JSON.parse(await readFile(join(root, 'secrets.json'), 'utf8')) as Record<string, string>;
    expect(Object.keys(stored)).toEqual(['apiKeyPepper']);
    expect(SecretBox.fromKeyRing(encryptionKey).decrypt(secrets.secretBox.encrypt('x'))).toBe('x');
    expect(lines.join('')).toContain('API_KEY_PEPPER');
    expect(lines.join('')).not.toContain('ENCRYPTION_KEY');

    // Later the key is no longer given: one is added to the file beside the kept pepper.
    const later = await loadSecrets({ dataDir: root, embedded: true, logger });
    const updated = JSON.parse(await readFile(join(root, 'secrets.json'), 'utf8')) as Record<string, string>;
    expect(updated.apiKeyPepper).toBe(stored.apiKeyPepper);
    expect(updated.encryptionKey).toMatch(/^k1:/);
    expect(later.digester.digest('v')).toBe(secrets.digester.digest('v'));
    expect((await stat(join(root, 'secrets.json'))).mode & 0o777).toBe(0o600);
  });

  it('uses given secrets without touching the disk or warning', async () => {
    const { logger, lines } = capturingLogger();
    const secrets = await loadSecrets({
      encryptionKey: randomBytes(32).toString('base64'),
      apiKeyPepper: randomBytes(32).toString('base64'),
      dataDir: join(root, 'unused'),
      embedded: false,
      logger,
    });
    expect(secrets.secretBox.decrypt(secrets.secretBox.encrypt('ok'))).toBe('ok');
    await expect(stat(join(root, 'unused'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(lines).toEqual([]);
  });

  it('refuses to generate when not embedded, naming the missing variable', async () => {
    const { logger } = capturingLogger();
    const missingKey = loadSecrets({ apiKeyPepper: randomBytes(32).toString('base64'), dataDir: root, embedded: false, logger });
    await expect(missingKey).rejects.toBeInstanceOf(CryptoError);
    await expect(missingKey).rejects.toThrow(/ENCRYPTION_KEY must be set/);

    const missingPepper = loadSecrets({ encryptionKey: randomBytes(32).toString('base64'), dataDir: root, embedded: false, logger });
    await expect(missingPepper).rejects.toThrow(/^API_KEY_PEPPER must be set/);
    await expect(stat(join(root, 'secrets.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a damaged secrets file rather than replacing it', async () => {
    await mkdir(root, { recursive: true });
    await writeFile(join(root, 'secrets.json'), '{ not json');
    const { logger } = capturingLogger();
    await expect(loadSecrets({ dataDir: root, embedded: true, logger })).rejects.toMatchObject({
      reason: 'malformed_secrets_file',
    });
    expect(await readFile(join(root, 'secrets.json'), 'utf8')).toBe('{ not json');
  });

  it('refuses a malformed given key without echoing it', async () => {
    const { logger } = capturingLogger();
    const bad = randomBytes(20).toString('base64');
    const attempt = loadSecrets({ encryptionKey: bad, apiKeyPepper: randomBytes(32).toString('base64'), dataDir: root, embedded: false, logger });
    await expect(attempt).rejects.toMatchObject({ reason: 'malformed_key_ring' });
    await expect(attempt).rejects.not.toThrow(bad);
  });
});
