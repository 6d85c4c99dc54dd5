import { randomBytes } from 'node:crypto';
import { startPlatform, type RunningPlatform } from '@platform/platform/src/platform';
import { ApiClient, embeddedEnv, infraUrl, realInfraEnv, TEST_ADMIN } from '@platform/test';

/**
 * Sessions live in Postgres: they survive a restart of the platform on the same database, and end after
 * SESSION_TTL. The platform is started by hand here so it can be stopped and started again with one env.
 */
describe('session lifetime', () => {
  let env: NodeJS.ProcessEnv;
  let cleanup: () => Promise<void>;
  let running: RunningPlatform | undefined;

  const view = () => ({ url: (p: string) => `http://127.0.0.1:${running!.httpPort}${p}`, origin: 'http://localhost:3000' });

  beforeAll(async () => {
    const postgres = infraUrl('postgres');
    const infra = postgres ? await realInfraEnv({ postgres, redis: infraUrl('redis')!, kafka: infraUrl('kafka')! }) : embeddedEnv();
    env = {
      ...infra.env,
      // Fixed across restarts (embedded mode would otherwise generate them into DATA_DIR, which also works).
      ENCRYPTION_KEY: `k1:${randomBytes(32).toString('base64')}`,
      API_KEY_PEPPER: randomBytes(32).toString('base64'),
      APP_URL: 'http://localhost:3000',
      BOOTSTRAP_ADMIN_EMAIL: TEST_ADMIN.email,
      BOOTSTRAP_ADMIN_PASSWORD: TEST_ADMIN.password,
          };
    cleanup = infra.cleanup;
    running = await startPlatform({ target: 'all', env });
  }, 120_000);
  afterAll(async () => {
    await running?.stop();
    await cleanup?.();
  });

  it('keeps a session across a restart of the platform', async () => {
    const client = new ApiClient(view());
    expect((await client.signIn(TEST_ADMIN.email, TEST_ADMIN.password)).status).toBe(200);
    await running!.stop();
    running = undefined;
    running = await startPlatform({ target: 'all', env });
    const me = await client.get('/v1/me');
    expect(me.status).toBe(200);
    expect(me.body.data.person.email).toBe(TEST_ADMIN.email);
  }, 120_000);

  it('ends a session after SESSION_TTL', async () => {
    await running!.stop();
    running = undefined;
    running = await startPlatform({ target: 'all', env: { ...env, SESSION_TTL: '2s' } });
    const client = new ApiClient(view());
    const signedIn = await client.signIn(TEST_ADMIN.email, TEST_ADMIN.password);
    expect(signedIn.status).toBe(200);
    expect(signedIn.headers.getSetCookie().find((c) => c.startsWith('platform_session='))).toMatch(/Max-Age=2(;|$)/);
    expect((await client.get('/v1/me')).status).toBe(200);
    // Past its expiry the server refuses the session, whatever the browser still sends.
    const expiresAt = Date.parse(signedIn.body.data.expiresAt);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now()) + 1_000));
    expect((await client.get('/v1/me')).status).toBe(401);
  }, 120_000);
});
