import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startPlatform } from '@platform/platform/src/platform';
import { adminClient, ApiClient, describeWith, newPerson, runPlatformCommand, startTestPlatform, type TestPlatform } from '@platform/test';


/** Runs `platform create-admin` as a real process; the password goes in on stdin or ADMIN_PASSWORD. */
const createAdmin = (args: string[], env: NodeJS.ProcessEnv, stdin: string) => runPlatformCommand('create-admin', args, { LOG_LEVEL: 'silent', ...env }, stdin);

describe('create-admin command', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'create-admin-'));
  const env = { DATA_DIR: dataDir };
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('creates an admin, resets it, refuses an empty password, and the server accepts the result', async () => {
    // The refusal of no password opens no database: it runs beside the first run (each is a process that takes
    // seconds to load), which the other runs cannot, as only one process at a time may open the embedded database.
    const [created, empty] = await Promise.all([
      createAdmin(['--email', 'root@example.test'], env, 'first password 123\n'),
      createAdmin(['--email', 'other@example.test'], env, ''),
    ]);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^created platform admin root@example\.test \([0-9a-f-]{36}\)\n$/);
    expect(created.stdout).not.toContain('first password');

    const reset = await createAdmin(['--email', 'ROOT@example.test'], { ...env, ADMIN_PASSWORD: 'second password 456' }, '');
    expect(reset.code).toBe(0);
    expect(reset.stdout).toMatch(/^reset platform admin/);

    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/no password given/);

    const short = await createAdmin(['--email', 'other@example.test'], env, 'short\n');
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/at least 12 characters/);

    const platform = await startPlatform({ target: 'all', env: { ...env, PORT: '0', OPS_PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'silent' } });
    try {
      const view = { url: (p: string) => `http://127.0.0.1:${platform.httpPort}${p}`, origin: new URL(platform.context.config.env.APP_URL).origin };
      const client = new ApiClient(view);
      expect((await client.post('/v1/auth/sign-in', { email: 'root@example.test', password: 'first password 123' })).status).toBe(401);
      expect((await client.signIn('root@example.test', 'second password 456')).status).toBe(200);
      expect((await client.get('/v1/me')).body.data.platformRole).toBe('admin');
      expect((await new ApiClient(view).post('/v1/auth/sign-in', { email: 'other@example.test', password: 'x' })).status).toBe(401);
    } finally {
      await platform.stop();
    }
  }, 180_000);
});

/** With the server's Redis, a reset reaches running edges at once: they drop what they remembered about the person. */
describeWith('postgres', 'create-admin command beside a running platform', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    // Remembered answers would otherwise live a minute (the most AUTH_CACHE_SECONDS allows): only the generation
    // can explain a change seen at the next request.
    platform = await startTestPlatform({ env: { AUTH_CACHE_SECONDS: '60' } });
  }, 120_000);
  afterAll(async () => platform?.stop());

  it('promotes a signed-in person, whose next request already sees the new role', async () => {
    const person = await newPerson(platform, await adminClient(platform), 'promoted');
    expect((await person.client.get('/v1/me')).body.data.platformRole).toBeNull();
    const reset = await createAdmin(['--email', person.email], { ...platform.env, ADMIN_PASSWORD: 'promoted password 789' }, '');
    expect(reset.stderr).toBe('');
    expect(reset.code).toBe(0);
    expect((await person.client.get('/v1/me')).body.data.platformRole).toBe('admin');
  }, 120_000);
});
