import type { Client } from 'pg';
import { adminClient, ApiClient, databaseOf, newPerson, newTeam, startTestPlatform, type TestPerson, type TestPlatform } from '@platform/test';
import { auditEventsOf, keyTablesContain } from '../api-keys/support';

const FIELDS = [
  'activeKeyCount', 'createdAt', 'createdByName', 'description', 'enabled', 'id', 'lastUsedAt', 'name', 'revision', 'role', 'teamId',
  'teamSlug', 'updatedAt',
];

/** Service accounts (§2.14, ops 14 and 15) and their keys, through the real edge. */
describe('service accounts', () => {
  let platform: TestPlatform;
  let admin: ApiClient;
  let db: Client | null;
  let owner: TestPerson;
  let teamAdmin: TestPerson;
  let editor: TestPerson;
  let auditor: TestPerson;
  let team: string;
  let counter = 0;

  beforeAll(async () => {
    platform = await startTestPlatform();
    admin = await adminClient(platform);
    db = await databaseOf(platform);
    owner = await newPerson(platform, admin, 'Olive Owner');
    teamAdmin = await newPerson(platform, admin, 'team-admin');
    editor = await newPerson(platform, admin, 'editor');
    auditor = await newPerson(platform, admin, 'auditor', 'auditor');
    team = await newTeam(admin, owner, [
      [teamAdmin, 'admin'],
      [editor, 'editor'],
    ]);
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await platform?.stop();
  });

  const accounts = () => `/v1/teams/${team}/service-accounts`;
  const newAccount = async (client: ApiClient = owner.client, body: Record<string, unknown> = {}) => {
    counter += 1;
    return client.post(accounts(), { name: `robot-${counter}`, ...body });
  };

  it('creates an account with exactly the fields of §2.14', async () => {
    const created = await newAccount(owner.client, { description: 'Nightly import', role: 'editor' });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body.data).sort()).toEqual(FIELDS);
    expect(created.body.data).toMatchObject({
      description: 'Nightly import',
      role: 'editor',
      enabled: true,
      activeKeyCount: 0,
      lastUsedAt: null,
      createdByName: 'Olive Owner',
      teamSlug: team,
      revision: 1,
    });
    expect(created.headers.get('etag')).toBe('"1"');

    const duplicate = await owner.client.post(accounts(), { name: created.body.data.name });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error.code).toBe('conflict');
    const defaults = await newAccount(teamAdmin.client);
    expect(defaults.status).toBe(201);
    expect(defaults.body.data).toMatchObject({ role: 'member', description: '', enabled: true });
    if (db) expect(await auditEventsOf(db, 'service_account.create', created.body.data.id)).toHaveLength(1);
  });

  it('refuses a bad name, a long description and the owner or admin role, naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'Has-Capitals' }, 'name'],
      [{ name: '-leading' }, 'name'],
      [{ name: 'trailing-' }, 'name'],
      [{ name: 'a'.repeat(65) }, 'name'],
      [{ name: 'ok-name', description: 'x'.repeat(2001) }, 'description'],
      [{ name: 'ok-name', role: 'owner' }, 'role'],
      [{ name: 'ok-name', role: 'admin' }, 'role'],
    ];
    for (const [body, field] of cases) {
      const response = await owner.client.post(accounts(), body);
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
      expect(response.body.error.fields.map((f: { field: string }) => f.field)).toContain(field);
    }
    expect((await owner.client.post(accounts(), { name: 'a'.repeat(64), description: 'x'.repeat(2000) })).status).toBe(201);
  });

  it('lets owners and admins manage, platform staff read, and nobody else', async () => {
    const created = await newAccount();
    const one = `${accounts()}/${created.body.data.id}`;
    expect((await newAccount(editor.client)).status).toBe(403);
    expect((await editor.client.get(accounts())).status).toBe(403);
    expect((await editor.client.get(one)).status).toBe(403);

    for (const reader of [owner.client, teamAdmin.client, auditor.client, admin]) {
      const read = await reader.get(one);
      expect(read.status).toBe(200);
      expect(read.body.data.id).toBe(created.body.data.id);
      expect(read.headers.get('etag')).toBe(`"${read.body.data.revision}"`);
      const list = await reader.get(accounts());
      expect(list.status).toBe(200);
      expect(list.body.data.map((a: { id: string }) => a.id)).toContain(created.body.data.id);
    }
    // Platform staff read, but do not change (403: they can see the team).
    expect((await auditor.client.patch(one, { enabled: false }, { 'if-match': '"1"' })).status).toBe(403);
    // An outsider cannot tell whether the team exists.
    const outsider = await newPerson(platform, admin, 'outsider');
    expect((await outsider.client.get(one)).status).toBe(404);
    expect((await owner.client.get(`${accounts()}/${crypto.randomUUID()}`)).status).toBe(404);
  });

  it('changes an account under If-Match (op 15) and validates every field', async () => {
    const created = await newAccount();
    const other = await newAccount();
    const one = `${accounts()}/${created.body.data.id}`;

    expect((await owner.client.patch(one, { description: 'x' })).status).toBe(428);
    expect((await owner.client.patch(one, { description: 'x' }, { 'if-match': '"7"' })).status).toBe(412);
    const invalid: [Record<string, unknown>, string][] = [
      [{ name: 'Bad Name' }, 'name'],
      [{ description: 'x'.repeat(2001) }, 'description'],
      [{ role: 'owner' }, 'role'],
      [{ role: 'admin' }, 'role'],
      [{ enabled: 'no' }, 'enabled'],
      [{ keys: [] }, 'keys'],
    ];
    for (const [body, field] of invalid) {
      const response = await owner.client.patch(one, body, { 'if-match': '"1"' });
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
      expect(response.body.error.fields.map((f: { field: string }) => f.field)).toContain(field);
    }
    const taken = await owner.client.patch(one, { name: other.body.data.name }, { 'if-match': '"1"' });
    expect(taken.status).toBe(409);

    const changed = await teamAdmin.client.patch(one, { name: 'renamed-bot', description: 'Renamed', role: 'editor' }, { 'if-match': '"1"' });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ name: 'renamed-bot', description: 'Renamed', role: 'editor', enabled: true, revision: 2 });
    expect(changed.headers.get('etag')).toBe('"2"');
    expect((await owner.client.patch(one, { enabled: false }, { 'if-match': '"1"' })).status).toBe(412);
    if (db) {
      const [event] = await auditEventsOf(db, 'service_account.update', created.body.data.id);
      expect(event?.data).toMatchObject({
        before: { name: created.body.data.name, role: 'member' },
        after: { name: 'renamed-bot', role: 'editor', description: 'Renamed' },
      });
    }
  });

  it('keeps the revision and writes no audit entry for a change that alters nothing (If-Match still checked)', async () => {
    const created = (await newAccount(owner.client, { description: 'Same' })).body.data;
    const one = `${accounts()}/${created.id}`;
    const updates = () => owner.client.get(`/v1/teams/${team}/audit?action=service_account.update&targetId=${created.id}`);

    expect((await owner.client.patch(one, {}, { 'if-match': '"7"' })).status).toBe(412);
    for (const body of [{}, { name: created.name, description: 'Same', role: 'member', enabled: true }]) {
      const unchanged = await owner.client.patch(one, body, { 'if-match': '"1"' });
      expect({ body, status: unchanged.status }).toEqual({ body, status: 200 });
      expect(unchanged.body.data).toEqual(created);
      expect(unchanged.headers.get('etag')).toBe('"1"');
    }
    expect((await owner.client.get(one)).body.data).toEqual(created);
    expect((await updates()).body.data).toEqual([]);

    // A change to one field among unchanged ones moves the revision once, and its entry records that field alone.
    const changed = await owner.client.patch(one, { name: created.name, description: 'Different' }, { 'if-match': '"1"' });
    expect(changed.body.data).toMatchObject({ description: 'Different', revision: 2 });
    const entries = (await updates()).body.data;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ before: { description: 'Same' }, after: { description: 'Different' } });
  });

  it('issues keys that act as the account, stop when it is disabled and work again when re-enabled', async () => {
    const created = await newAccount(owner.client, { role: 'editor' });
    const one = `${accounts()}/${created.body.data.id}`;
    const issued = await owner.client.post(`${one}/keys`, { name: 'ci', scopes: ['query', 'ingest', 'manage'] });
    expect(issued.status).toBe(201);
    expect(issued.headers.get('cache-control')).toBe('no-store');
    const key: string = issued.body.data.key;
    const secret = key.split('_')[2]!;
    expect(issued.body.data).toMatchObject({ kind: 'service', serviceAccountId: created.body.data.id, personId: null, hint: secret.slice(-4) });
    expect((await editor.client.post(`${one}/keys`, { name: 'x', scopes: ['query'] })).status).toBe(403);

    const listed = await owner.client.get(`${one}/keys`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((k: { id: string }) => k.id)).toEqual([issued.body.data.id]);
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    const teamList = await owner.client.get(`/v1/teams/${team}/api-keys?limit=200`);
    expect(JSON.stringify(teamList.body)).not.toContain(secret);
    expect((await owner.client.get(one)).body.data.activeKeyCount).toBe(1);

    const viaKey = ApiClient.withApiKey(platform, key);
    expect((await viaKey.get('/v1/maintenance')).status).toBe(200);
    expect((await viaKey.get(one)).status).toBe(403); // accounts are managed with browser sessions only

    const disabled = await owner.client.patch(one, { enabled: false }, { 'if-match': '"1"' });
    expect(disabled.status).toBe(200);
    expect(disabled.body.data.enabled).toBe(false);
    expect((await viaKey.get('/v1/maintenance')).status).toBe(401);

    expect((await owner.client.patch(one, { enabled: true }, { 'if-match': '"2"' })).status).toBe(200);
    expect((await viaKey.get('/v1/maintenance')).status).toBe(200);
    expect((await owner.client.get(one)).body.data.lastUsedAt).not.toBeNull();

    if (db) {
      expect(await keyTablesContain(db, secret)).toBe(false);
      const [event] = await auditEventsOf(db, 'service_account.key_create', issued.body.data.id);
      expect(event?.data).toMatchObject({ parent: { type: 'service_account', id: created.body.data.id }, target: { type: 'api_key' } });
    }
  });

  it('deletes an account with its keys, which stop working at once', async () => {
    const created = await newAccount();
    const one = `${accounts()}/${created.body.data.id}`;
    const key = (await owner.client.post(`${one}/keys`, { name: 'doomed', scopes: ['query'] })).body.data.key;
    const viaKey = ApiClient.withApiKey(platform, key);
    expect((await viaKey.get('/v1/maintenance')).status).toBe(200);

    expect((await editor.client.delete(one)).status).toBe(403);
    expect((await teamAdmin.client.delete(one)).status).toBe(204);
    expect((await viaKey.get('/v1/maintenance')).status).toBe(401);
    expect((await owner.client.get(one)).status).toBe(404);
    expect((await owner.client.get(`${one}/keys`)).status).toBe(404);
    expect((await owner.client.delete(one)).status).toBe(404);
    if (db) {
      const { rows } = await db.query('SELECT count(*)::int AS n FROM identity.api_keys WHERE service_account_id = $1', [created.body.data.id]);
      expect(rows[0].n).toBe(0);
      expect(await auditEventsOf(db, 'service_account.delete', created.body.data.id)).toHaveLength(1);
    }
  });

  it("refuses changes to an archived team's accounts and keys (409 team_archived), re-enabling included; reads still work", async () => {
    const archivedTeam = await newTeam(admin, owner, [[teamAdmin, 'admin']]);
    const teamAccounts = `/v1/teams/${archivedTeam}/service-accounts`;
    const keys = `/v1/teams/${archivedTeam}/api-keys`;
    const account = (await owner.client.post(teamAccounts, { name: 'archived-bot' })).body.data;
    const one = `${teamAccounts}/${account.id}`;
    expect((await owner.client.patch(one, { enabled: false }, { 'if-match': '"1"' })).status).toBe(200);
    const accountKey = (await owner.client.post(`${one}/keys`, { name: 'ci', scopes: ['query'] })).body.data;
    const personalKey = (await owner.client.post(keys, { name: 'laptop', kind: 'personal', scopes: ['query'] })).body.data;
    const teamRow = await owner.client.get(`/v1/teams/${archivedTeam}`);
    const archived = await owner.client.patch(`/v1/teams/${archivedTeam}`, { archived: true }, { 'if-match': teamRow.headers.get('etag')! });
    expect(archived.status).toBe(200);

    const refused = {
      'enable the account': await owner.client.patch(one, { enabled: true }, { 'if-match': '"2"' }),
      'rename the account': await teamAdmin.client.patch(one, { name: 'renamed' }, { 'if-match': '"2"' }),
      'delete the account': await owner.client.delete(one),
      "create an account's key": await owner.client.post(`${one}/keys`, { name: 'more', scopes: ['query'] }),
      "revoke an account's key": await owner.client.delete(`${keys}/${accountKey.id}`),
      'revoke a personal key': await owner.client.delete(`${keys}/${personalKey.id}`),
      'create a personal key': await owner.client.post(keys, { name: 'another', kind: 'personal', scopes: ['query'] }),
      'create a team service key': await owner.client.post(keys, { name: 'service', kind: 'service', scopes: ['query'] }),
    };
    for (const [change, response] of Object.entries(refused)) {
      expect({ change, status: response.status, code: response.body?.error?.code }).toEqual({ change, status: 409, code: 'team_archived' });
    }

    // Nothing changed, as reads (still allowed) show.
    const after = await owner.client.get(one);
    expect(after.status).toBe(200);
    expect(after.body.data).toMatchObject({ name: 'archived-bot', enabled: false, revision: 2, activeKeyCount: 1 });
    const listed = await owner.client.get(`${keys}?includeInactive=true`);
    expect(listed.body.data.map((k: { id: string; status: string }) => [k.id, k.status]).sort()).toEqual(
      [[accountKey.id, 'active'], [personalKey.id, 'active']].sort(),
    );
  });

  it('pages the list newest first', async () => {
    for (let i = 0; i < 3; i++) await newAccount();
    const all = (await owner.client.get(`${accounts()}?limit=200`)).body.data.map((a: { id: string }) => a.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: { id: string }[]; nextCursor: string | null } } = await owner.client.get(
        `${accounts()}?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...page.body.data.map((a) => a.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all);
    expect(all.length).toBeGreaterThanOrEqual(3);
  });
});
