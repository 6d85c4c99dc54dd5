import { adminClient, ApiClient, newPerson, startTestPlatform, TEST_ADMIN, TEST_PASSWORD, uniqueEmail, type TestPlatform } from '@platform/test';

/** Sign-in, sign-out, /v1/me, CSRF and suspension through the real edge. */
describe('browser sessions', () => {
  let platform: TestPlatform;
  let admin: ApiClient;

  beforeAll(async () => {
    platform = await startTestPlatform();
    admin = await adminClient(platform);
  }, 120_000);
  afterAll(() => platform?.stop());

  it('signs in with a HttpOnly SameSite=Lax cookie, without Secure on http', async () => {
    const client = new ApiClient(platform);
    const response = await client.signIn(TEST_ADMIN.email, TEST_ADMIN.password);
    expect(response.status).toBe(200);
    expect(response.body.data.person.email).toBe(TEST_ADMIN.email);
    expect(response.body.data.person.platformRole).toBe('admin');
    expect(Date.parse(response.body.data.expiresAt)).toBeGreaterThan(Date.now() + 11 * 3600_000);
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith('platform_session='))!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).toMatch(/Max-Age=43200/);
    expect(cookie).not.toMatch(/Secure/);
    // The token never appears in the body.
    const token = cookie.split(';')[0]!.split('=')[1]!;
    expect(JSON.stringify(response.body)).not.toContain(token);
  });

  it('answers the same 401 for a wrong password, an unknown email and a suspended person', async () => {
    const person = await newPerson(platform, admin, { label: 'suspendee' });
    const suspended = await admin.patch(`/v1/admin/people/${person.id}`, { status: 'suspended' }, { 'if-match': `"${person.revision}"` });
    expect(suspended.status).toBe(200);

    const anonymous = new ApiClient(platform);
    const wrong = await anonymous.post('/v1/auth/sign-in', { email: TEST_ADMIN.email, password: 'not the password at all' });
    const unknown = await anonymous.post('/v1/auth/sign-in', { email: uniqueEmail('nobody'), password: TEST_PASSWORD });
    const ofSuspended = await anonymous.post('/v1/auth/sign-in', { email: person.email, password: TEST_PASSWORD });
    for (const response of [wrong, unknown, ofSuspended]) {
      expect(response.status).toBe(401);
      expect(response.headers.getSetCookie()).toEqual([]);
      const { requestId: _ignored, ...error } = response.body.error;
      expect(error).toEqual({ code: 'unauthenticated', message: 'Invalid email or password' });
    }
  });

  it('locks an account after repeated failures, refusing even the right password, with Retry-After', async () => {
    const person = await newPerson(platform, admin, { label: 'locked' });
    const client = new ApiClient(platform);
    for (let i = 0; i < 5; i++) {
      expect((await client.post('/v1/auth/sign-in', { email: person.email, password: `wrong password ${i}` })).status).toBe(401);
    }
    // Same account in other letter case: the account is the normalised email.
    const locked = await client.post('/v1/auth/sign-in', { email: person.email.toUpperCase(), password: TEST_PASSWORD });
    expect(locked.status).toBe(429);
    expect(locked.body.error.code).toBe('slow_down');
    const retryAfter = Number(locked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    expect(locked.headers.getSetCookie()).toEqual([]);
    // Other accounts from the same address still sign in.
    expect((await new ApiClient(platform).signIn(TEST_ADMIN.email, TEST_ADMIN.password)).status).toBe(200);
  });

  it('GET /v1/me returns the person, teams with roles, the personal workspace and the CSRF token', async () => {
    const person = await newPerson(platform, admin, { label: 'me' });
    const team = await admin.post('/v1/teams', { slug: `me-team-${Date.now().toString(36)}`, name: 'Me team', ownerId: person.id });
    expect(team.status).toBe(201);
    const me = await person.client.get('/v1/me');
    expect(me.status).toBe(200);
    expect(me.headers.get('cache-control')).toBe('no-store');
    expect(me.body.data.person).toMatchObject({ id: person.id, email: person.email, status: 'active', platformRole: null });
    expect(me.body.data.platformRole).toBeNull();
    expect(me.body.data.personalTeam).toMatchObject({ kind: 'personal' });
    expect(typeof me.body.data.csrfToken).toBe('string');
    expect(me.body.data.csrfToken.length).toBeGreaterThan(20);
    expect(me.body.data.teams).toEqual([expect.objectContaining({ role: 'owner', team: expect.objectContaining({ id: team.body.data.id }) })]);
    expect(me.body.data.teams.some((t: { team: { kind: string } }) => t.team.kind === 'personal')).toBe(false);
    // Without credentials: 401.
    expect((await fetch(platform.url('/v1/me'))).status).toBe(401);
  });

  it('refuses a browser write without X-CSRF-Token or with a foreign Origin (403 csrf_failed)', async () => {
    const person = await newPerson(platform, admin, { label: 'csrf' });
    const noToken = await person.client.post('/v1/auth/sign-out', undefined, { 'x-csrf-token': '' });
    expect(noToken.status).toBe(403);
    expect(noToken.body.error.code).toBe('csrf_failed');
    const foreign = await person.client.post('/v1/auth/sign-out', undefined, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe('csrf_failed');
    const patch = await admin.patch(`/v1/admin/people/${person.id}`, { displayName: 'x' }, { 'if-match': '1', 'x-csrf-token': 'forged' });
    expect(patch.status).toBe(403);
    expect(patch.body.error.code).toBe('csrf_failed');
    // The session still works: nothing was signed out.
    expect((await person.client.get('/v1/me')).status).toBe(200);
  });

  it('signs out: the session ends server-side and the cookie is cleared', async () => {
    const person = await newPerson(platform, admin, { label: 'signout' });
    const replay = person.client.cookieHeader();
    const out = await person.client.post('/v1/auth/sign-out');
    expect(out.status).toBe(204);
    const cleared = out.headers.getSetCookie().find((c) => c.startsWith('platform_session='))!;
    expect(cleared).toMatch(/^platform_session=;/);
    expect(cleared).toMatch(/Max-Age=0/);
    // The old cookie value no longer works, even if a browser kept it.
    const again = await fetch(platform.url('/v1/me'), { headers: { cookie: replay } });
    expect(again.status).toBe(401);
  });

  it('suspension ends every session of the person and makes their personal API key fail', async () => {
    const person = await newPerson(platform, admin, { label: 'suspend' });
    const second = new ApiClient(platform);
    expect((await second.signIn(person.email, TEST_PASSWORD)).status).toBe(200);
    const me = await person.client.get('/v1/me');
    const personalSlug = me.body.data.personalTeam.slug;
    const created = await person.client.post(`/v1/teams/${personalSlug}/api-keys`, { name: 'mine', kind: 'personal', scopes: ['query'] });
    expect(created.status).toBe(201);
    const keyClient = ApiClient.withApiKey(platform, created.body.data.key);
    expect((await keyClient.get('/v1/me')).status).toBe(200);

    const current = await admin.get(`/v1/admin/people/${person.id}`);
    const suspended = await admin.patch(`/v1/admin/people/${person.id}`, { status: 'suspended' }, { 'if-match': current.headers.get('etag')! });
    expect(suspended.status).toBe(200);
    expect(suspended.body.data.status).toBe('suspended');

    expect((await person.client.get('/v1/me')).status).toBe(401);
    expect((await second.get('/v1/me')).status).toBe(401);
    expect((await keyClient.get('/v1/me')).status).toBe(401);

    // Reactivating does not bring the ended sessions back; the person signs in again.
    const reactivated = await admin.patch(`/v1/admin/people/${person.id}`, { status: 'active' }, { 'if-match': suspended.headers.get('etag')! });
    expect(reactivated.status).toBe(200);
    expect((await person.client.get('/v1/me')).status).toBe(401);
    expect((await new ApiClient(platform).signIn(person.email, TEST_PASSWORD)).status).toBe(200);
  });

  it('GET /v1/me answers a personal key with a null csrfToken and refuses service keys', async () => {
    const person = await newPerson(platform, admin, { label: 'keys' });
    const slug = (await person.client.get('/v1/me')).body.data.personalTeam.slug;
    const personal = await person.client.post(`/v1/teams/${slug}/api-keys`, { name: 'p', kind: 'personal', scopes: ['query'] });
    const service = await person.client.post(`/v1/teams/${slug}/api-keys`, { name: 's', kind: 'service', scopes: ['query'] });
    expect(personal.status).toBe(201);
    expect(service.status).toBe(201);
    const viaPersonal = await ApiClient.withApiKey(platform, personal.body.data.key).get('/v1/me');
    expect(viaPersonal.status).toBe(200);
    expect(viaPersonal.body.data.person.id).toBe(person.id);
    expect(viaPersonal.body.data.csrfToken).toBeNull();
    const viaService = await ApiClient.withApiKey(platform, service.body.data.key).get('/v1/me');
    expect(viaService.status).toBe(403);
  });

  it('GET /v1/auth/config answers anyone with the sign-in methods and install identity', async () => {
    const response = await fetch(platform.url('/v1/auth/config'));
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: unknown };
    expect(body.data).toEqual({ instanceName: expect.any(String), appUrl: platform.env.APP_URL ?? expect.stringMatching(/^http/), signInMethods: ['password'] });
  });

  it('validates the sign-in body, naming the fields', async () => {
    const response = await new ApiClient(platform).post('/v1/auth/sign-in', { email: 'x@example.test', password: 'p', extra: 1 });
    expect(response.status).toBe(400);
    expect(response.body.error.fields).toEqual(expect.arrayContaining([{ field: 'extra', problem: 'unknown field' }]));
    const missing = await new ApiClient(platform).post('/v1/auth/sign-in', {});
    expect(missing.body.error.fields.map((f: { field: string }) => f.field).sort()).toEqual(['email', 'password']);
  });
});
