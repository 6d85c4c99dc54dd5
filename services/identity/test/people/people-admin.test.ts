import { adminClient, ApiClient, newPerson, startTestPlatform, TEST_PASSWORD, uniqueEmail, type TestPlatform } from '@platform/test';

/** People administration under /v1/admin/people: callers, If-Match, validation, self-protection, paging. */
describe('people administration', () => {
  let platform: TestPlatform;
  let admin: ApiClient;
  let adminId: string;

  beforeAll(async () => {
    platform = await startTestPlatform();
    admin = await adminClient(platform);
    adminId = (await admin.get('/v1/me')).body.data.person.id;
  }, 120_000);
  afterAll(() => platform?.stop());

  it('creates a person with a personal workspace; the email is unique case-insensitively', async () => {
    const email = uniqueEmail('created');
    const created = await admin.post('/v1/admin/people', { email, displayName: 'Created One', password: TEST_PASSWORD, platformRole: 'staff' });
    expect(created.status).toBe(201);
    expect(created.headers.get('etag')).toBe('"1"');
    expect(created.body.data).toMatchObject({ email, displayName: 'Created One', status: 'active', platformRole: 'staff', lastSignInAt: null, revision: 1 });
    expect(JSON.stringify(created.body)).not.toContain(TEST_PASSWORD);
    const duplicate = await admin.post('/v1/admin/people', { email: email.toUpperCase(), displayName: 'Again' });
    expect(duplicate.status).toBe(409);

    const client = new ApiClient(platform);
    expect((await client.signIn(email, TEST_PASSWORD)).status).toBe(200);
    expect((await client.get('/v1/me')).body.data.personalTeam.kind).toBe('personal');
    const read = await admin.get(`/v1/admin/people/${created.body.data.id}`);
    expect(read.body.data.lastSignInAt).not.toBeNull();
  });

  it('names the invalid fields', async () => {
    const response = await admin.post('/v1/admin/people', { email: 'not-an-email', displayName: '', password: 'short', platformRole: 'king', extra: true });
    expect(response.status).toBe(400);
    const fields = response.body.error.fields.map((f: { field: string }) => f.field).sort();
    expect(fields).toEqual(['displayName', 'email', 'extra', 'password', 'platformRole']);
    const person = await newPerson(platform, admin);
    const patch = await admin.patch(`/v1/admin/people/${person.id}`, { status: 'gone' }, { 'if-match': '1' });
    expect(patch.status).toBe(400);
    expect(patch.body.error.fields).toEqual([expect.objectContaining({ field: 'status' })]);
    expect((await admin.get('/v1/admin/people/not-a-uuid')).status).toBe(400);
    expect((await admin.get('/v1/admin/people/6f9619ff-8b86-4011-b42d-00cf4fc964ff')).status).toBe(404);
  });

  it('enforces callers: admins change, auditors read only, others are refused, API keys never', async () => {
    const auditor = await newPerson(platform, admin, { label: 'auditor', platformRole: 'auditor' });
    const plain = await newPerson(platform, admin, { label: 'plain' });
    const staff = await newPerson(platform, admin, { label: 'staff', platformRole: 'staff' });

    expect((await auditor.client.get('/v1/admin/people')).status).toBe(200);
    expect((await auditor.client.get(`/v1/admin/people/${plain.id}`)).status).toBe(200);
    expect((await auditor.client.post('/v1/admin/people', { email: uniqueEmail('x'), displayName: 'X' })).status).toBe(403);
    expect((await auditor.client.patch(`/v1/admin/people/${plain.id}`, { displayName: 'Y' }, { 'if-match': '1' })).status).toBe(403);

    for (const other of [plain, staff]) {
      expect((await other.client.get('/v1/admin/people')).status).toBe(403);
      expect((await other.client.get(`/v1/admin/people/${plain.id}`)).status).toBe(403);
      expect((await other.client.post('/v1/admin/people', { email: uniqueEmail('x'), displayName: 'X' })).status).toBe(403);
    }
    expect((await new ApiClient(platform).get('/v1/admin/people')).status).toBe(401);

    const slug = (await plain.client.get('/v1/me')).body.data.personalTeam.slug;
    const key = await plain.client.post(`/v1/teams/${slug}/api-keys`, { name: 'k', kind: 'personal', scopes: ['query'] });
    expect(key.status).toBe(201);
    expect((await ApiClient.withApiKey(platform, key.body.data.key).get('/v1/admin/people')).status).toBe(403);
  });

  it('updates with If-Match: 428 without, 412 when stale, then applies every field', async () => {
    const person = await newPerson(platform, admin, { label: 'update' });
    const missing = await admin.patch(`/v1/admin/people/${person.id}`, { displayName: 'Renamed' });
    expect(missing.status).toBe(428);
    const stale = await admin.patch(`/v1/admin/people/${person.id}`, { displayName: 'Renamed' }, { 'if-match': '"7"' });
    expect(stale.status).toBe(412);
    expect((await admin.get(`/v1/admin/people/${person.id}`)).body.data.displayName).toBe('update');

    const renamed = await admin.patch(`/v1/admin/people/${person.id}`, { displayName: 'Renamed', platformRole: 'auditor' }, { 'if-match': '"1"' });
    expect(renamed.status).toBe(200);
    expect(renamed.headers.get('etag')).toBe('"2"');
    expect(renamed.body.data).toMatchObject({ displayName: 'Renamed', platformRole: 'auditor', revision: 2 });
    const cleared = await admin.patch(`/v1/admin/people/${person.id}`, { platformRole: null }, { 'if-match': '"2"' });
    expect(cleared.body.data.platformRole).toBeNull();

    // A password reset by an admin: the new password works, the old one does not, their sessions end.
    const reset = await admin.patch(`/v1/admin/people/${person.id}`, { password: 'a brand new password' }, { 'if-match': '"3"' });
    expect(reset.status).toBe(200);
    expect(JSON.stringify(reset.body)).not.toContain('a brand new password');
    expect((await person.client.get('/v1/me')).status).toBe(401);
    expect((await new ApiClient(platform).post('/v1/auth/sign-in', { email: person.email, password: TEST_PASSWORD })).status).toBe(401);
    expect((await new ApiClient(platform).signIn(person.email, 'a brand new password')).status).toBe(200);
  });

  it('keeps the revision and writes no audit entry for a change that alters nothing (If-Match still checked)', async () => {
    const person = await newPerson(platform, admin, { label: 'unchanged' });
    const one = `/v1/admin/people/${person.id}`;
    const before = (await admin.get(one)).body.data;
    expect((await admin.patch(one, {}, { 'if-match': '"7"' })).status).toBe(412);
    for (const body of [{}, { displayName: before.displayName, status: 'active', platformRole: null }]) {
      const unchanged = await admin.patch(one, body, { 'if-match': '"1"' });
      expect({ body, status: unchanged.status }).toEqual({ body, status: 200 });
      expect(unchanged.body.data).toEqual(before);
      expect(unchanged.headers.get('etag')).toBe('"1"');
    }
    expect((await admin.get(one)).body.data).toEqual(before);
    const entries = (await admin.get(`/v1/teams/platform/audit?action=person.&targetId=${person.id}`)).body.data;
    expect(entries.filter((e: { action: string }) => e.action !== 'person.create')).toEqual([]);
    // Their session is untouched too.
    expect((await person.client.get('/v1/me')).status).toBe(200);
  });

  it('refuses an admin suspending or demoting themself (409) and keeps them admin', async () => {
    const me = await admin.get(`/v1/admin/people/${adminId}`);
    const etag = me.headers.get('etag')!;
    const suspend = await admin.patch(`/v1/admin/people/${adminId}`, { status: 'suspended' }, { 'if-match': etag });
    expect(suspend.status).toBe(409);
    expect(suspend.body.error.code).toBe('conflict');
    const demote = await admin.patch(`/v1/admin/people/${adminId}`, { platformRole: 'auditor' }, { 'if-match': etag });
    expect(demote.status).toBe(409);
    const after = await admin.get(`/v1/admin/people/${adminId}`);
    expect(after.body.data).toMatchObject({ status: 'active', platformRole: 'admin' });
    expect(after.headers.get('etag')).toBe(etag);
  });

  it('lists people by email with cursor paging and a query filter', async () => {
    const tag = `pagetag${Date.now().toString(36)}`;
    for (let i = 0; i < 3; i++) {
      const response = await admin.post('/v1/admin/people', { email: `${tag}-${i}@example.test`, displayName: `Paged ${i}` });
      expect(response.status).toBe(201);
    }
    const first = await admin.get(`/v1/admin/people?query=${tag}&limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.data.map((p: { email: string }) => p.email)).toEqual([`${tag}-0@example.test`, `${tag}-1@example.test`]);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await admin.get(`/v1/admin/people?query=${tag}&limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.data.map((p: { email: string }) => p.email)).toEqual([`${tag}-2@example.test`]);
    expect(second.body.nextCursor).toBeNull();
    // The filter matches display names too, case-insensitively; `%` is literal.
    expect((await admin.get(`/v1/admin/people?query=${tag.toUpperCase()}`)).body.data).toHaveLength(3);
    expect((await admin.get('/v1/admin/people?query=%25%25')).body.data).toHaveLength(0);
    const bad = await admin.get('/v1/admin/people?cursor=bm90LWpzb24');
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields).toEqual([expect.objectContaining({ field: 'cursor' })]);
  });

  it('audits changes and suspension without the password, and sign-ins without the token', async () => {
    const person = await newPerson(platform, admin, { label: 'audited' });
    const secret = 'an audited new password';
    await admin.patch(`/v1/admin/people/${person.id}`, { displayName: 'Audited', password: secret }, { 'if-match': '"1"' });
    // The reset ended their session; one new session is live when they are suspended.
    expect((await new ApiClient(platform).signIn(person.email, secret)).status).toBe(200);
    await admin.patch(`/v1/admin/people/${person.id}`, { status: 'suspended' }, { 'if-match': '"2"' });
    const entries = await waitForAudit(`/v1/teams/platform/audit?action=person.&limit=200`, (list) =>
      ['person.update', 'person.suspend'].every((action) => list.some((e) => e.action === action && e.targetId === person.id)),
    );
    const update = entries.find((e) => e.action === 'person.update' && e.targetId === person.id)!;
    expect(update.metadata).toMatchObject({ passwordChanged: true });
    expect(update.after).toEqual({ displayName: 'Audited' });
    const suspend = entries.find((e) => e.action === 'person.suspend' && e.targetId === person.id)!;
    expect(suspend.metadata).toMatchObject({ endedSessions: 1 });
    expect(JSON.stringify(entries)).not.toContain(secret);
    expect(JSON.stringify(entries)).not.toContain(TEST_PASSWORD);

    const signIns = await waitForAudit(`/v1/teams/platform/audit?action=session.sign_in&limit=200`, (list) => list.some((e) => e.targetId === person.id));
    const token = person.client.cookieHeader().split('=')[1]!;
    expect(JSON.stringify(signIns)).not.toContain(token);
  });

  type Entry = { action: string; targetId: string; before: unknown; after: unknown; metadata: Record<string, unknown> };
  async function waitForAudit(pathname: string, done: (entries: Entry[]) => boolean): Promise<Entry[]> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const response = await admin.get(pathname);
      expect(response.status).toBe(200);
      const entries = response.body.data as Entry[];
      if (done(entries) || Date.now() > deadline) return entries;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
});
