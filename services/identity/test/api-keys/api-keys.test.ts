import type { Client } from 'pg';
import { adminClient, ApiClient, databaseOf, newPerson, newTeam, startTestPlatform, type TestPerson, type TestPlatform } from '@platform/test';
import { auditEventsOf, keyTablesContain } from './support';

const KEY_FORMAT = /^rag_([a-z2-7]{16})_([a-z2-7]{32})$/;

/** API keys (§5.1) through the real edge: format, secrecy, scopes, visibility, revocation and refusal. */
describe('API keys', () => {
  let platform: TestPlatform;
  let admin: ApiClient;
  let db: Client | null;
  let owner: TestPerson;
  let editor: TestPerson;
  let member: TestPerson;
  let team: string;

  beforeAll(async () => {
    platform = await startTestPlatform();
    admin = await adminClient(platform);
    db = await databaseOf(platform);
    owner = await newPerson(platform, admin, 'owner');
    editor = await newPerson(platform, admin, 'editor');
    member = await newPerson(platform, admin, 'member');
    team = await newTeam(admin, owner, [
      [editor, 'editor'],
      [member, 'member'],
    ]);
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await platform?.stop();
  });

  const keysPath = () => `/v1/teams/${team}/api-keys`;
  const create = (client: ApiClient, body: Record<string, unknown>) => client.post(keysPath(), { name: 'a key', kind: 'personal', scopes: ['query'], ...body });

  it('shows the full key once, in rag_<id>_<secret> form, and stores only a digest', async () => {
    const created = await create(member.client, { name: 'laptop' });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const key: string = created.body.data.key;
    const [, id, secret] = KEY_FORMAT.exec(key)!;
    expect(created.body.data).toMatchObject({
      id,
      name: 'laptop',
      kind: 'personal',
      scopes: ['query'],
      hint: secret!.slice(-4),
      personId: member.id,
      serviceAccountId: null,
      status: 'active',
      expiresAt: null,
      revokedAt: null,
    });

    const listed = await member.client.get(keysPath());
    const read = await member.client.get(`${keysPath()}/${id}`);
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(expect.objectContaining({ id, hint: secret!.slice(-4) }));
    expect(read.body.data.key).toBeUndefined();
    expect(listed.body.data.map((k: { id: string }) => k.id)).toContain(id);
    for (const response of [listed, read]) {
      expect(JSON.stringify(response.body)).not.toContain(secret!);
    }

    // On real Postgres (always under CI) the stored rows are checked too.
    if (process.env.TEST_POSTGRES_URL) expect(db).not.toBeNull();
    if (db) {
      const { rows } = await db.query('SELECT secret_digest, hint FROM identity.api_keys WHERE id = $1', [id]);
      expect(rows[0].hint).toBe(secret!.slice(-4));
      expect(rows[0].secret_digest).not.toContain(secret!);
      expect(await keyTablesContain(db, secret!)).toBe(false);
      expect(await keyTablesContain(db, key)).toBe(false);
      // The digest stays in its column: no event or audit entry carries it.
      const digest: string = rows[0].secret_digest;
      const leaked = await db.query(
        `SELECT (SELECT count(*) FROM identity.outbox o WHERE o::text LIKE '%' || $1 || '%')
              + (SELECT count(*) FROM identity.audit_entries a WHERE a::text LIKE '%' || $1 || '%') AS hits`,
        [digest],
      );
      expect(Number(leaked.rows[0].hits)).toBe(0);
      const [event] = await auditEventsOf(db, 'api_key.create', id!);
      expect(event?.data).toMatchObject({ teamId: created.body.data.teamId, target: { type: 'api_key', id, label: 'laptop' }, after: { hint: secret!.slice(-4) } });
    }
  });

  it('acts as its person on a route that accepts keys, and is refused on session-only and admin routes', async () => {
    const created = await create(member.client, { name: 'cli' });
    const viaKey = ApiClient.withApiKey(platform, created.body.data.key);
    const me = await viaKey.get('/v1/me');
    expect(me.status).toBe(200);
    expect(me.body.data.person.id).toBe(member.id);

    expect((await viaKey.get(keysPath())).status).toBe(403); // key management takes browser sessions only
    const adminRoute = await viaKey.get('/v1/admin/people');
    expect(adminRoute.status).toBe(403);
    expect(adminRoute.body.error.code).toBe('forbidden');
  });

  it('answers 401 for unknown, malformed and wrong-secret keys', async () => {
    const created = await create(member.client, { name: 'to forge' });
    const [, id] = KEY_FORMAT.exec(created.body.data.key)!;
    const forged = `rag_${id}_${'a'.repeat(32)}`;
    const unknown = `rag_${'b'.repeat(16)}_${'c'.repeat(32)}`;
    for (const key of [forged, unknown, 'rag_short_key', 'rag_']) {
      const response = await ApiClient.withApiKey(platform, key).get('/v1/me');
      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('unauthenticated');
      expect(JSON.stringify(response.body)).not.toContain(key);
    }
  });

  it('revokes idempotently; the key answers 401 at its next request', async () => {
    const created = await create(member.client, { name: 'to revoke' });
    const { id } = created.body.data;
    const viaKey = ApiClient.withApiKey(platform, created.body.data.key);
    expect((await viaKey.get('/v1/me')).status).toBe(200);

    const revoked = await member.client.delete(`${keysPath()}/${id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.data).toMatchObject({ id, status: 'revoked' });
    expect(revoked.body.data.revokedAt).not.toBeNull();
    expect((await viaKey.get('/v1/me')).status).toBe(401);

    const again = await member.client.delete(`${keysPath()}/${id}`);
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(revoked.body.data);

    // Revoked keys leave the default listing but stay visible on request.
    const active = await member.client.get(keysPath());
    expect(active.body.data.map((k: { id: string }) => k.id)).not.toContain(id);
    const all = await member.client.get(`${keysPath()}?includeInactive=true`);
    expect(all.body.data.find((k: { id: string }) => k.id === id)?.status).toBe('revoked');
    if (db) expect(await auditEventsOf(db, 'api_key.revoke', id)).toHaveLength(1);
  });

  it('answers 401 once a key has expired, and refuses an expiry in the past', async () => {
    const past = await create(member.client, { expiresAt: new Date(Date.now() - 60_000).toISOString() });
    expect(past.status).toBe(400);
    expect(past.body.error.fields).toEqual([expect.objectContaining({ field: 'expiresAt' })]);

    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const created = await create(member.client, { name: 'short-lived', expiresAt });
    expect(created.status).toBe(201);
    const viaKey = ApiClient.withApiKey(platform, created.body.data.key);
    expect((await viaKey.get('/v1/me')).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(expiresAt) - Date.now()) + 300));
    expect((await viaKey.get('/v1/me')).status).toBe(401);
    const read = await member.client.get(`${keysPath()}/${created.body.data.id}`);
    expect(read.body.data.status).toBe('expired');
  });

  it('bounds personal key scopes by role; service keys need an owner or admin', async () => {
    const memberIngest = await create(member.client, { scopes: ['query', 'ingest'] });
    expect(memberIngest.status).toBe(400);
    expect(memberIngest.body.error.fields).toEqual([expect.objectContaining({ field: 'scopes' })]);

    expect((await create(editor.client, { scopes: ['query', 'ingest'] })).status).toBe(201);
    const editorManage = await create(editor.client, { scopes: ['manage'] });
    expect(editorManage.status).toBe(400);
    expect(editorManage.body.error.fields[0].field).toBe('scopes');
    expect((await create(owner.client, { scopes: ['query', 'ingest', 'manage'] })).status).toBe(201);

    expect((await create(member.client, { kind: 'service' })).status).toBe(403);
    expect((await create(editor.client, { kind: 'service', scopes: ['query'] })).status).toBe(403);
    const service = await create(owner.client, { kind: 'service', scopes: ['query', 'ingest', 'manage'] });
    expect(service.status).toBe(201);
    expect(service.body.data).toMatchObject({ kind: 'service', personId: null, scopes: ['query', 'ingest', 'manage'] });
  });

  it('refuses bad input naming the field, and changes nothing', async () => {
    const before = (await owner.client.get(`${keysPath()}?includeInactive=true&limit=200`)).body.data.length;
    const cases: [Record<string, unknown>, string][] = [
      [{ name: '' }, 'name'],
      [{ name: 'x'.repeat(101) }, 'name'],
      [{ scopes: [] }, 'scopes'],
      [{ scopes: ['admin'] }, 'scopes'],
      [{ scopes: ['query', 'query'] }, 'scopes'],
      [{ kind: 'team' }, 'kind'],
      [{ expiresAt: 'tomorrow' }, 'expiresAt'],
      [{ knowledgeBaseIds: ['not-a-uuid'] }, 'knowledgeBaseIds'],
      [{ agentIds: Array.from({ length: 101 }, () => crypto.randomUUID()) }, 'agentIds'],
      [{ secret: 'chosen' }, 'secret'],
    ];
    for (const [body, field] of cases) {
      const response = await create(owner.client, body);
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
      expect(response.body.error.fields.map((f: { field: string }) => f.field.split('.')[0])).toContain(field);
    }
    expect((await owner.client.get(`${keysPath()}?includeInactive=true&limit=200`)).body.data.length).toBe(before);
  });

  it('refuses an expiry past year 9999 once in UTC with 400 naming expiresAt (it was a 500), creating nothing', async () => {
    const account = await owner.client.post(`/v1/teams/${team}/service-accounts`, { name: `expiry-bot-${Date.now()}` });
    expect(account.status).toBe(201);
    const accountKeys = `/v1/teams/${team}/service-accounts/${account.body.data.id}/keys`;
    const before = (await owner.client.get(`${keysPath()}?includeInactive=true&limit=200`)).body.data.length;
    // Written in year 9999, but year 10000 in UTC, whose ISO text (+010000-…) PostgreSQL does not read.
    const beyond = '9999-12-31T23:59:59-05:00';
    for (const response of [
      await create(owner.client, { expiresAt: beyond }),
      await create(owner.client, { kind: 'service', expiresAt: beyond }),
      await owner.client.post(accountKeys, { name: 'ci', scopes: ['query'], expiresAt: beyond }),
    ]) {
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
      expect(response.body.error.fields).toEqual([expect.objectContaining({ field: 'expiresAt' })]);
    }
    expect((await owner.client.get(`${keysPath()}?includeInactive=true&limit=200`)).body.data.length).toBe(before);
    // The last instant of year 9999 is still a valid expiry.
    expect((await create(owner.client, { expiresAt: '9999-12-31T23:59:59Z' })).status).toBe(201);
  });

  it('keeps the restriction lists it was given', async () => {
    const kb = crypto.randomUUID();
    const agent = crypto.randomUUID();
    const created = await create(owner.client, { kind: 'service', knowledgeBaseIds: [kb], agentIds: [agent] });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ knowledgeBaseIds: [kb], agentIds: [agent] });
  });

  it('shows members only their own personal keys; owners see and revoke every key', async () => {
    const mine = await create(member.client, { name: 'mine' });
    const editors = await create(editor.client, { name: 'editors' });
    const service = await create(owner.client, { kind: 'service', name: 'service' });

    const memberList = await member.client.get(`${keysPath()}?limit=200`);
    expect(memberList.body.data.every((k: { personId: string }) => k.personId === member.id)).toBe(true);
    expect(memberList.body.data.map((k: { id: string }) => k.id)).toContain(mine.body.data.id);
    expect((await member.client.get(`${keysPath()}/${editors.body.data.id}`)).status).toBe(404);
    expect((await member.client.get(`${keysPath()}/${service.body.data.id}`)).status).toBe(404);
    expect((await member.client.delete(`${keysPath()}/${editors.body.data.id}`)).status).toBe(404);
    expect((await member.client.get(`${keysPath()}/${'z'.repeat(16)}`)).status).toBe(404);

    const ownerList = await owner.client.get(`${keysPath()}?limit=200`);
    const ids = ownerList.body.data.map((k: { id: string }) => k.id);
    expect(ids).toEqual(expect.arrayContaining([mine.body.data.id, editors.body.data.id, service.body.data.id]));

    // Paging walks the same keys, newest first, without repeats.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: { id: string }[]; nextCursor: string | null } } = await owner.client.get(
        `${keysPath()}?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data.map((k) => k.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    expect((await owner.client.get(`${keysPath()}?cursor=bm9wZQ`)).status).toBe(400);

    expect((await owner.client.delete(`${keysPath()}/${mine.body.data.id}`)).status).toBe(200);
    expect((await ApiClient.withApiKey(platform, mine.body.data.key).get('/v1/me')).status).toBe(401);
  });

  it('revokes a removed member\'s personal keys while the team\'s service key keeps working', async () => {
    const leaver = await newPerson(platform, admin, 'leaver');
    expect((await admin.post(`/v1/teams/${team}/members`, { personId: leaver.id, role: 'member' })).status).toBe(201);
    const personal = ApiClient.withApiKey(platform, (await create(leaver.client, { name: 'leaver key' })).body.data.key);
    const service = ApiClient.withApiKey(platform, (await create(owner.client, { kind: 'service', name: 'team key' })).body.data.key);
    expect((await personal.get('/v1/me')).status).toBe(200);
    expect((await service.get('/v1/maintenance')).status).toBe(200);

    expect((await owner.client.delete(`/v1/teams/${team}/members/${leaver.id}`)).status).toBe(204);
    expect((await personal.get('/v1/me')).status).toBe(401);
    expect((await service.get('/v1/maintenance')).status).toBe(200);
  });

  it('takes browser sessions only for creating keys, with the CSRF token', async () => {
    const noCsrf = await member.client.post(keysPath(), { name: 'x', kind: 'personal', scopes: ['query'] }, { 'x-csrf-token': 'wrong' });
    expect(noCsrf.status).toBe(403);
    const key = (await create(member.client, {})).body.data.key;
    const viaKey = ApiClient.withApiKey(platform, key);
    expect((await viaKey.post(keysPath(), { name: 'x', kind: 'personal', scopes: ['query'] })).status).toBe(403);
    expect((await new ApiClient(platform).get(keysPath())).status).toBe(401);
  });
});
