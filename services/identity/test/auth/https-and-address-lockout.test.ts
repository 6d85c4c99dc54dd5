import { ApiClient, startTestPlatform, TEST_ADMIN, TEST_PASSWORD, uniqueEmail, type TestPlatform } from '@platform/test';

/** An https installation: `__Host-` cookie with Secure; and the per-address sign-in back-off. */
describe('sessions on an https APP_URL', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { APP_URL: 'https://platform.example' } });
  }, 120_000);
  afterAll(() => platform?.stop());

  it('sets the __Host- prefixed Secure cookie and accepts it back', async () => {
    const client = new ApiClient(platform);
    const response = await client.signIn(TEST_ADMIN.email, TEST_ADMIN.password);
    expect(response.status).toBe(200);
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith('__Host-platform_session='))!;
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toMatch(/Domain=/i);
    expect(client.csrfToken).toBeTruthy();
    // A write from the https origin passes the Origin check.
    expect((await client.post('/v1/auth/sign-out')).status).toBe(204);
  });

  it('backs off per client address after 20 failures, whatever the account', async () => {
    const client = new ApiClient(platform);
    for (let i = 0; i < 20; i++) {
      expect((await client.post('/v1/auth/sign-in', { email: uniqueEmail('spray'), password: TEST_PASSWORD })).status).toBe(401);
    }
    const refused = await client.post('/v1/auth/sign-in', { email: TEST_ADMIN.email, password: TEST_ADMIN.password });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('slow_down');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  }, 60_000);
});

/** The per-address back-off behind a trusted proxy: an IPv6 client is one client across its /64. */
describe('the sign-in back-off for IPv6 clients', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { TRUST_PROXY: 'loopback' } });
  }, 120_000);
  afterAll(() => platform?.stop());

  const signInFrom = (address: string, email: string, password: string) =>
    fetch(platform.url('/v1/auth/sign-in'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: platform.origin, 'x-forwarded-for': address },
      body: JSON.stringify({ email, password }),
    });

  it('counts the failures of every address of a /64 together (a host may rotate through it), and not the next /64', async () => {
    for (let i = 0; i < 20; i++) {
      expect((await signInFrom(`2001:db8:a:b::${(i + 1).toString(16)}`, uniqueEmail('rotate'), TEST_PASSWORD)).status).toBe(401);
    }
    const refused = await signInFrom('2001:db8:a:b:ffff::1', TEST_ADMIN.email, TEST_ADMIN.password);
    expect(refused.status).toBe(429);
    expect((await signInFrom('2001:db8:a:c::1', TEST_ADMIN.email, TEST_ADMIN.password)).status).toBe(200);
  }, 60_000);
});
