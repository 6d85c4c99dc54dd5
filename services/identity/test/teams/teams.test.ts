import { adminClient, ApiClient, newPerson, startTestPlatform, unique, type TestPerson, type TestPlatform } from '@platform/test';
import { ifMatch } from './support';

/** Teams through the real edge: create, list, read by slug and id, rename, archive; who may do each. */
describe('teams', () => {
  let platform: TestPlatform;
  let admin: ApiClient;
  let owner: TestPerson;
  let member: TestPerson;
  let outsider: TestPerson;
  let staff: TestPerson;
  let team: { id: string; slug: string; revision: number };

  beforeAll(async () => {
    platform = await startTestPlatform();
    admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    member = await newPerson(platform, admin, 'member');
    outsider = await newPerson(platform, admin, 'outsider');
    staff = await newPerson(platform, admin, 'staff', 'staff');
    const created = await admin.post('/v1/teams', { slug: unique('acme'), name: 'Acme', ownerId: owner.id });
    expect(created.status).toBe(201);
    team = created.body.data;
    const added = await owner.client.post(`/v1/teams/${team.slug}/members`, { personId: member.id, role: 'member' });
    expect(added.status).toBe(201);
  }, 120_000);

  afterAll(() => platform?.stop());

  it('creates a team (platform admins only) with its owner, an ETag and kind team', async () => {
    const slug = unique('made');
    const response = await admin.post('/v1/teams', { slug, name: '  Made  ' });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ slug, name: 'Made', kind: 'team', archived: false, memberCount: 1, revision: 1 });
    expect(response.headers.get('etag')).toBe('"1"');
    // Without ownerId, the creating admin is the owner.
    const members = await admin.get(`/v1/teams/${slug}/members`);
    expect(members.body.data).toEqual([expect.objectContaining({ role: 'owner', email: expect.stringMatching(/^admin@/) })]);

    expect((await owner.client.post('/v1/teams', { slug: unique('nope'), name: 'Nope' })).status).toBe(403);
    expect((await staff.client.post('/v1/teams', { slug: unique('nope'), name: 'Nope' })).status).toBe(403);
  });

  it('refuses a taken slug with 409 and bad input naming the field', async () => {
    const taken = await admin.post('/v1/teams', { slug: team.slug, name: 'Again' });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatchObject({ code: 'conflict', message: 'slug already taken' });

    for (const slug of ['Upper', '-lead', 'trail-', 'a'.repeat(64), 'under_score', '6f9619ff-8b86-4011-b42d-00cf4fc964ff', '']) {
      const bad = await admin.post('/v1/teams', { slug, name: 'Bad' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.fields.map((f: { field: string }) => f.field)).toContain('slug');
    }
    const longName = await admin.post('/v1/teams', { slug: unique('long'), name: 'x'.repeat(101) });
    expect(longName.body.error.fields).toEqual([expect.objectContaining({ field: 'name' })]);
    const unknown = await admin.post('/v1/teams', { slug: unique('extra'), name: 'Extra', kind: 'personal' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.fields).toEqual([{ field: 'kind', problem: 'unknown field' }]);
    const noOwner = await admin.post('/v1/teams', { slug: unique('ghost'), name: 'Ghost', ownerId: '6f9619ff-8b86-4011-b42d-00cf4fc964ff' });
    expect(noOwner.status).toBe(404);
  });

  it('shows a team to its members by slug and by id, to platform staff, and as 404 to others', async () => {
    for (const ref of [team.slug, team.id, team.id.toUpperCase()]) {
      const read = await member.client.get(`/v1/teams/${ref}`);
      expect(read.status).toBe(200);
      expect(read.body.data).toMatchObject({ id: team.id, slug: team.slug, role: 'member', memberCount: 2 });
      expect(read.headers.get('etag')).toBe(`"${read.body.data.revision}"`);
    }
    const byStaff = await staff.client.get(`/v1/teams/${team.slug}`);
    expect(byStaff.status).toBe(200);
    expect(byStaff.body.data.role).toBeNull();

    expect((await outsider.client.get(`/v1/teams/${team.slug}`)).status).toBe(404);
    expect((await outsider.client.get(`/v1/teams/${team.id}`)).status).toBe(404);
    expect((await outsider.client.get('/v1/teams/no-such-team-here')).status).toBe(404);
    expect((await new ApiClient(platform).get(`/v1/teams/${team.slug}`)).status).toBe(401);
  });

  it('lists the caller\'s teams with their role; every team only for platform staff', async () => {
    const mine = await member.client.get('/v1/teams');
    expect(mine.status).toBe(200);
    const kinds = mine.body.data.map((t: { kind: string; role: string }) => `${t.kind}:${t.role}`).sort();
    expect(kinds).toEqual(['personal:owner', 'team:member']);
    expect(mine.body.nextCursor).toBeNull();

    const onlyTeams = await member.client.get('/v1/teams?kind=team');
    expect(onlyTeams.body.data.map((t: { id: string }) => t.id)).toEqual([team.id]);

    expect((await member.client.get('/v1/teams?all=true')).status).toBe(403);
    const every = await staff.client.get('/v1/teams?all=true&kind=team&limit=1');
    expect(every.status).toBe(200);
    expect(every.body.data).toHaveLength(1);
    expect(typeof every.body.nextCursor).toBe('string');
    const seen = new Set<string>();
    let cursor: string | null = null;
    do {
      const page: { body: { data: { id: string }[]; nextCursor: string | null } } = await staff.client.get(
        `/v1/teams?all=true&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      for (const t of page.body.data) seen.add(t.id);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen.has(team.id)).toBe(true);
    expect(seen.has('00000000-0000-4000-8000-000000000001')).toBe(true);
    expect((await staff.client.get('/v1/teams?all=true&cursor=bm9wZQ')).status).toBe(400);
  });

  it('renames with If-Match (428 without, 412 stale); members and outsiders may not', async () => {
    const current = (await owner.client.get(`/v1/teams/${team.slug}`)).body.data;
    expect((await owner.client.patch(`/v1/teams/${team.slug}`, { name: 'Acme Two' })).status).toBe(428);
    expect((await owner.client.patch(`/v1/teams/${team.slug}`, { name: 'Acme Two' }, ifMatch(current.revision + 5))).status).toBe(412);
    // Revisions start at 1: "0" is a revision that can never match, so stale rather than missing.
    expect((await owner.client.patch(`/v1/teams/${team.slug}`, { name: 'Acme Two' }, ifMatch(0))).status).toBe(412);
    expect((await member.client.patch(`/v1/teams/${team.slug}`, { name: 'Mine' }, ifMatch(current.revision))).status).toBe(403);
    expect((await outsider.client.patch(`/v1/teams/${team.slug}`, { name: 'Mine' }, ifMatch(current.revision))).status).toBe(404);
    const badBody = await owner.client.patch(`/v1/teams/${team.slug}`, { name: 'Acme', slug: 'other' }, ifMatch(current.revision));
    expect(badBody.body.error.fields).toEqual([{ field: 'slug', problem: 'unknown field' }]);

    const renamed = await owner.client.patch(`/v1/teams/${team.id}`, { name: 'Acme Two' }, ifMatch(current.revision));
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: 'Acme Two', revision: current.revision + 1 });
    expect(renamed.headers.get('etag')).toBe(`"${current.revision + 1}"`);
  });

  it('archives and unarchives (owners only); an archived team refuses renames and membership changes', async () => {
    const slug = unique('arch');
    const created = (await admin.post('/v1/teams', { slug, name: 'Archive me', ownerId: owner.id })).body.data;
    const teamAdmin = await newPerson(platform, admin, 'teamadmin');
    const added = await owner.client.post(`/v1/teams/${slug}/members`, { personId: teamAdmin.id, role: 'admin' });
    expect(added.status).toBe(201);

    expect((await teamAdmin.client.patch(`/v1/teams/${slug}`, { archived: true }, ifMatch(created.revision))).status).toBe(403);
    const archived = await owner.client.patch(`/v1/teams/${slug}`, { archived: true }, ifMatch(created.revision));
    expect(archived.status).toBe(200);
    expect(archived.body.data).toMatchObject({ archived: true, archivedAt: expect.any(String) });
    const revision = archived.body.data.revision;

    const rename = await owner.client.patch(`/v1/teams/${slug}`, { name: 'Still here' }, ifMatch(revision));
    expect(rename.status).toBe(409);
    expect(rename.body.error.code).toBe('team_archived');
    const add = await owner.client.post(`/v1/teams/${slug}/members`, { personId: member.id, role: 'member' });
    expect(add.status).toBe(409);
    expect(add.body.error.code).toBe('team_archived');

    // Hidden from lists unless asked for, with the caller's role even then.
    expect((await owner.client.get('/v1/teams')).body.data.map((t: { slug: string }) => t.slug)).not.toContain(slug);
    const withArchived = await owner.client.get('/v1/teams?includeArchived=true');
    expect(withArchived.body.data).toContainEqual(expect.objectContaining({ slug, role: 'owner', archived: true }));

    const back = await owner.client.patch(`/v1/teams/${slug}`, { archived: false, name: 'Back' }, ifMatch(revision));
    expect(back.status).toBe(200);
    expect(back.body.data).toMatchObject({ archived: false, archivedAt: null, name: 'Back' });
  });

  it('never archives a personal workspace or the platform team', async () => {
    const personal = (await outsider.client.get('/v1/teams?kind=personal')).body.data[0];
    const refused = await outsider.client.patch(`/v1/teams/${personal.id}`, { archived: true }, ifMatch(personal.revision));
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('conflict');
    const addToPersonal = await outsider.client.post(`/v1/teams/${personal.id}/members`, { personId: member.id, role: 'member' });
    expect(addToPersonal.status).toBe(409);

    const platformTeam = (await admin.get('/v1/teams/platform')).body.data;
    const archivePlatform = await admin.patch('/v1/teams/platform', { archived: true }, ifMatch(platformTeam.revision));
    expect(archivePlatform.status).toBe(409);
  });
});
