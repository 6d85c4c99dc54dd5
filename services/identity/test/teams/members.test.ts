import type { Client } from 'pg';
import { adminClient, ApiClient, databaseOf, newPerson, startTestPlatform, unique, type TestPerson, type TestPlatform } from '@platform/test';
import { ifMatch } from './support';

/** Memberships through the real edge: add, change role, remove or leave; owner rules; keys of leavers; audit. */
describe('team members', () => {
  let platform: TestPlatform;
  let admin: ApiClient;
  let owner: TestPerson;
  let teamAdmin: TestPerson;
  let editor: TestPerson;
  let outsider: TestPerson;
  let slug: string;
  let teamId: string;
  let db: Client | null = null;

  beforeAll(async () => {
    platform = await startTestPlatform();
    admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    teamAdmin = await newPerson(platform, admin, 'teamadmin');
    editor = await newPerson(platform, admin, 'editor');
    outsider = await newPerson(platform, admin, 'outsider');
    slug = unique('crew');
    teamId = (await admin.post('/v1/teams', { slug, name: 'Crew', ownerId: owner.id })).body.data.id;
    expect((await owner.client.post(`/v1/teams/${slug}/members`, { personId: teamAdmin.id, role: 'admin' })).status).toBe(201);
    expect((await teamAdmin.client.post(`/v1/teams/${slug}/members`, { email: editor.email.toUpperCase(), role: 'editor' })).status).toBe(201);
    if (platform.env.DATABASE_URL) db = await databaseOf(platform);
  }, 120_000);

  afterAll(async () => {
    await db?.end();
    await platform?.stop();
  });

  const membership = async (personId: string) => {
    const list = await owner.client.get(`/v1/teams/${slug}/members?limit=200`);
    return list.body.data.find((m: { personId: string }) => m.personId === personId);
  };

  it('lists members (team members and platform staff; 404 for outsiders) with paging', async () => {
    const page = await editor.client.get(`/v1/teams/${teamId}/members?limit=2`);
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(2);
    const rest = await editor.client.get(`/v1/teams/${teamId}/members?limit=2&cursor=${page.body.nextCursor}`);
    expect(rest.body.nextCursor).toBeNull();
    const all = [...page.body.data, ...rest.body.data];
    expect(all.map((m: { role: string }) => m.role).sort()).toEqual(['admin', 'editor', 'owner']);
    expect(all[0]).toEqual({
      teamId,
      personId: expect.any(String),
      email: expect.any(String),
      displayName: expect.any(String),
      status: 'active',
      role: expect.any(String),
      joinedAt: expect.any(String),
      revision: 1,
    });
    expect((await admin.get(`/v1/teams/${slug}/members`)).status).toBe(200);
    expect((await outsider.client.get(`/v1/teams/${slug}/members`)).status).toBe(404);
  });

  it('adds members: owners and admins only, existing people only, once, with valid input', async () => {
    const newcomer = await newPerson(platform, admin, 'newcomer');
    expect((await editor.client.post(`/v1/teams/${slug}/members`, { personId: newcomer.id, role: 'member' })).status).toBe(403);
    expect((await outsider.client.post(`/v1/teams/${slug}/members`, { personId: newcomer.id, role: 'member' })).status).toBe(404);
    expect((await owner.client.post(`/v1/teams/${slug}/members`, { email: 'nobody@example.test', role: 'member' })).status).toBe(404);
    expect((await owner.client.post(`/v1/teams/${slug}/members`, { personId: '6f9619ff-8b86-4011-b42d-00cf4fc964ff', role: 'member' })).status).toBe(404);

    const both = await owner.client.post(`/v1/teams/${slug}/members`, { personId: newcomer.id, email: newcomer.email, role: 'member' });
    expect(both.status).toBe(400);
    expect(both.body.error.fields).toEqual([expect.objectContaining({ field: 'personId' })]);
    const badRole = await owner.client.post(`/v1/teams/${slug}/members`, { personId: newcomer.id, role: 'boss' });
    expect(badRole.body.error.fields).toEqual([expect.objectContaining({ field: 'role' })]);
    const extra = await owner.client.post(`/v1/teams/${slug}/members`, { personId: newcomer.id, role: 'member', note: 'hi' });
    expect(extra.body.error.fields).toEqual([{ field: 'note', problem: 'unknown field' }]);

    const added = await teamAdmin.client.post(`/v1/teams/${slug}/members`, { personId: newcomer.id, role: 'member' });
    expect(added.status).toBe(201);
    expect(added.body.data).toMatchObject({ teamId, personId: newcomer.id, email: newcomer.email, role: 'member', revision: 1 });
    expect(added.headers.get('etag')).toBe('"1"');
    const again = await owner.client.post(`/v1/teams/${slug}/members`, { personId: newcomer.id, role: 'member' });
    expect(again.status).toBe(409);
    // The newcomer now sees the team.
    expect((await newcomer.client.get(`/v1/teams/${slug}`)).body.data.role).toBe('member');
  });

  it('records team.member_add in the team\'s audit log, stored with the change', async () => {
    const listed = await owner.client.get(`/v1/teams/${slug}/audit?action=team.member_add&targetId=${editor.id}`);
    expect(listed.status).toBe(200);
    const entries: Array<Record<string, unknown>> = listed.body.data;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      teamId,
      action: 'team.member_add',
      targetType: 'person',
      targetId: editor.id,
      targetLabel: editor.email,
      after: { role: 'editor' },
      actor: { kind: 'user', userId: teamAdmin.id },
    });
  });

  it('lets only owners grant or take away the owner role, with If-Match on the membership', async () => {
    const target = await membership(editor.id);
    expect((await teamAdmin.client.patch(`/v1/teams/${slug}/members/${editor.id}`, { role: 'owner' }, ifMatch(target.revision))).status).toBe(403);
    expect((await teamAdmin.client.post(`/v1/teams/${slug}/members`, { personId: outsider.id, role: 'owner' })).status).toBe(403);
    expect((await editor.client.patch(`/v1/teams/${slug}/members/${editor.id}`, { role: 'admin' }, ifMatch(target.revision))).status).toBe(403);
    expect((await owner.client.patch(`/v1/teams/${slug}/members/${editor.id}`, { role: 'admin' })).status).toBe(428);
    expect((await owner.client.patch(`/v1/teams/${slug}/members/${editor.id}`, { role: 'admin' }, ifMatch(target.revision + 1))).status).toBe(412);

    const promoted = await owner.client.patch(`/v1/teams/${slug}/members/${editor.id}`, { role: 'owner' }, ifMatch(target.revision));
    expect(promoted.status).toBe(200);
    expect(promoted.body.data).toMatchObject({ role: 'owner', revision: target.revision + 1 });
    expect(promoted.headers.get('etag')).toBe(`"${target.revision + 1}"`);
    // An admin cannot demote or remove an owner.
    expect((await teamAdmin.client.patch(`/v1/teams/${slug}/members/${editor.id}`, { role: 'member' }, ifMatch(target.revision + 1))).status).toBe(403);
    expect((await teamAdmin.client.delete(`/v1/teams/${slug}/members/${editor.id}`)).status).toBe(403);

    const back = await owner.client.patch(`/v1/teams/${slug}/members/${editor.id}`, { role: 'editor' }, ifMatch(target.revision + 1));
    expect(back.body.data).toMatchObject({ role: 'editor', revision: target.revision + 2 });
    expect((await owner.client.patch(`/v1/teams/${slug}/members/${outsider.id}`, { role: 'member' }, ifMatch(1))).status).toBe(404);
  });

  it('never leaves a team without an owner', async () => {
    const own = await membership(owner.id);
    const demote = await owner.client.patch(`/v1/teams/${slug}/members/${owner.id}`, { role: 'admin' }, ifMatch(own.revision));
    expect(demote.status).toBe(409);
    expect(demote.body.error.code).toBe('conflict');
    const leave = await owner.client.delete(`/v1/teams/${slug}/members/${owner.id}`);
    expect(leave.status).toBe(409);
    expect((await membership(owner.id)).role).toBe('owner');
  });

  it('removes members (owners and admins) and lets a member leave, but not remove others', async () => {
    const a = await newPerson(platform, admin, 'leaver');
    const b = await newPerson(platform, admin, 'removed');
    for (const person of [a, b]) expect((await owner.client.post(`/v1/teams/${slug}/members`, { personId: person.id, role: 'member' })).status).toBe(201);

    expect((await a.client.delete(`/v1/teams/${slug}/members/${b.id}`)).status).toBe(403);
    expect((await outsider.client.delete(`/v1/teams/${slug}/members/${b.id}`)).status).toBe(404);
    expect((await a.client.delete(`/v1/teams/${slug}/members/${a.id}`)).status).toBe(204);
    expect((await a.client.get(`/v1/teams/${slug}`)).status).toBe(404);
    expect((await teamAdmin.client.delete(`/v1/teams/${slug}/members/${b.id}`)).status).toBe(204);
    expect((await teamAdmin.client.delete(`/v1/teams/${slug}/members/${b.id}`)).status).toBe(404);
  });

  it('revokes the leaver\'s personal keys of the team while service keys keep working', async () => {
    const keyHolder = await newPerson(platform, admin, 'keyholder');
    expect((await owner.client.post(`/v1/teams/${slug}/members`, { personId: keyHolder.id, role: 'editor' })).status).toBe(201);
    const personal = await keyHolder.client.post(`/v1/teams/${slug}/api-keys`, { name: 'mine', kind: 'personal', scopes: ['query'] });
    expect(personal.status).toBe(201);
    const service = await owner.client.post(`/v1/teams/${slug}/api-keys`, { name: 'robot', kind: 'service', scopes: ['query'] });
    expect(service.status).toBe(201);
    const personalKey = ApiClient.withApiKey(platform, personal.body.data.key);
    const serviceKey = ApiClient.withApiKey(platform, service.body.data.key);
    expect((await personalKey.get('/v1/maintenance')).status).toBe(200);

    expect((await owner.client.delete(`/v1/teams/${slug}/members/${keyHolder.id}`)).status).toBe(204);

    expect((await personalKey.get('/v1/maintenance')).status).toBe(401);
    expect((await serviceKey.get('/v1/maintenance')).status).toBe(200);
    const keys = await owner.client.get(`/v1/teams/${slug}/api-keys?includeInactive=true`);
    const byName = Object.fromEntries(keys.body.data.map((k: { name: string; status: string }) => [k.name, k.status]));
    expect(byName).toMatchObject({ mine: 'revoked', robot: 'active' });
    if (db) {
      const { rows } = await db.query('SELECT kind, revoked_at FROM identity.api_keys WHERE team_id = $1 ORDER BY kind', [teamId]);
      expect(rows.map((r) => [r.kind, r.revoked_at !== null])).toEqual([
        ['personal', true],
        ['service', false],
      ]);
      const audit = await db.query(
        "SELECT metadata FROM identity.audit_entries WHERE action = 'team.member_remove' AND target_id = $1",
        [keyHolder.id],
      );
      expect(audit.rows).toEqual([{ metadata: { revokedKeys: 1 } }]);
    }
  });

  it('lets a platform admin who is not a member manage members, the owner role included', async () => {
    const helper = await newPerson(platform, admin, 'helper');
    const added = await admin.post(`/v1/teams/${slug}/members`, { personId: helper.id, role: 'owner' });
    expect(added.status).toBe(201);
    expect(added.body.data.role).toBe('owner');
    expect((await admin.delete(`/v1/teams/${slug}/members/${helper.id}`)).status).toBe(204);
  });
});
