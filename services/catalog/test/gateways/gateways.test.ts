import { adminClient, eventually, newRoleCast, newTeam, startTestPlatform, unique, type ApiClient, type TestPerson, type TestPlatform } from '@platform/test';

const FIELDS = ['createdAt', 'enabled', 'id', 'name', 'revision', 'servers', 'slug', 'teamId', 'updatedAt', 'url'];

/** A team's gateways through the real edge: creating, listing and reading them, with who may do each. */
describe('gateways', () => {
  let platform: TestPlatform;
  let admin: ApiClient;
  let owner: TestPerson;
  let teamAdmin: TestPerson;
  let editor: TestPerson;
  let member: TestPerson;
  let outsider: TestPerson;
  let staff: TestPerson;
  let team: string;
  let otherTeam: string;

  beforeAll(async () => {
    platform = await startTestPlatform();
    admin = await adminClient(platform);
    ({ owner, teamAdmin, editor, member, outsider, staff, team, otherTeam } = await newRoleCast(platform, admin));
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
  });

  const gateways = (teamRef = team) => `/v1/teams/${teamRef}/gateways`;

  it('creates a gateway with its fields, its URL and an ETag, and audits it', async () => {
    const slug = unique('tools');
    const created = await owner.client.post(gateways(), { slug, name: '  Team tools  ' });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body.data).sort()).toEqual(FIELDS);
    const teamId = (await owner.client.get(`/v1/teams/${team}`)).body.data.id;
    expect(created.body.data).toMatchObject({
      teamId,
      slug,
      name: 'Team tools',
      enabled: true,
      servers: [],
      revision: 1,
      url: `${platform.platform.context.config.env.APP_URL.replace(/\/$/, '')}/mcp/${slug}`,
    });
    expect(created.headers.get('etag')).toBe('"1"');

    const entry = await eventually(async () => {
      const page = await owner.client.get(`/v1/teams/${team}/audit?action=gateway.create`);
      return page.body.data?.find((e: { targetId: string }) => e.targetId === created.body.data.id);
    }, 'the gateway.create audit entry');
    expect(entry).toMatchObject({ targetType: 'gateway', targetLabel: slug, after: { slug, name: 'Team tools', enabled: true, servers: [] } });
    expect(entry.actor.userId).toBe(owner.id);
  });

  it('lets team owners, team admins and platform admins create; members, editors and platform staff get 403, outsiders 404', async () => {
    expect((await teamAdmin.client.post(gateways(), { slug: unique('by-admin'), name: 'x' })).status).toBe(201);
    expect((await admin.post(gateways(), { slug: unique('by-platform'), name: 'x' })).status).toBe(201);
    expect((await member.client.post(gateways(), { slug: unique('by-member'), name: 'x' })).status).toBe(403);
    expect((await editor.client.post(gateways(), { slug: unique('by-editor'), name: 'x' })).status).toBe(403);
    expect((await outsider.client.post(gateways(), { slug: unique('by-outsider'), name: 'x' })).status).toBe(404);
    // Platform staff who are not members see every team, so a route they may not use is 403, not a hidden team.
    expect((await staff.client.post(gateways(), { slug: unique('by-staff'), name: 'x' })).status).toBe(403);
  });

  it('creates a disabled gateway when asked', async () => {
    const created = await owner.client.post(gateways(), { slug: unique('off'), name: 'Off', enabled: false });
    expect(created.status).toBe(201);
    expect(created.body.data.enabled).toBe(false);
  });

  it('refuses a slug taken by any team with 409 conflict', async () => {
    const slug = unique('shared');
    expect((await owner.client.post(gateways(), { slug, name: 'First' })).status).toBe(201);
    const again = await owner.client.post(gateways(), { slug, name: 'Again' });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('conflict');
    const elsewhere = await outsider.client.post(gateways(otherTeam), { slug, name: 'Elsewhere' });
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.body.error.code).toBe('conflict');
  });

  it.each([
    ['empty', ''],
    ['uppercase', 'Tools'],
    ['leading hyphen', '-tools'],
    ['trailing hyphen', 'tools-'],
    ['underscore', 'my_tools'],
    ['64 characters', 'a'.repeat(64)],
    ['a UUID', '6f1c2a52-8d8e-4c1e-9d7a-3b2a1c0d9e8f'],
  ])('refuses a slug that is %s, naming the field', async (_label, slug) => {
    const response = await owner.client.post(gateways(), { slug, name: 'Tools' });
    expect(response.status).toBe(400);
    expect(response.body.error.fields.map((f: { field: string }) => f.field)).toEqual(['slug']);
  });

  it('accepts the slug limits: one character and 63', async () => {
    // Each test platform has its own database, so no earlier run holds this slug.
    const long = unique('x').padEnd(63, 'z');
    expect((await owner.client.post(gateways(), { slug: 'q', name: 'One' })).status).toBe(201);
    expect((await owner.client.post(gateways(), { slug: long, name: 'Long' })).status).toBe(201);
  });

  it('refuses bad names, missing fields and unknown fields, naming them', async () => {
    const blank = await owner.client.post(gateways(), { slug: unique('n'), name: '   ' });
    expect(blank.status).toBe(400);
    expect(blank.body.error.fields.map((f: { field: string }) => f.field)).toEqual(['name']);
    const long = await owner.client.post(gateways(), { slug: unique('n'), name: 'n'.repeat(101) });
    expect(long.status).toBe(400);
    expect(long.body.error.fields.map((f: { field: string }) => f.field)).toEqual(['name']);
    const missing = await owner.client.post(gateways(), {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.fields.map((f: { field: string }) => f.field).sort()).toEqual(['name', 'slug']);
    const unknown = await owner.client.post(gateways(), { slug: unique('n'), name: 'x', upstreams: [] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.fields.map((f: { field: string }) => f.field)).toContain('upstreams');
    expect((await owner.client.post(gateways(), { slug: unique('n'), name: 'x', enabled: 'yes' })).status).toBe(400);
  });

  it('lists a team\'s gateways by slug, in pages, to members and platform staff only', async () => {
    const listed = await newTeam(admin, owner, [[member, 'member']]);
    const slugs = [unique('c'), unique('a'), unique('b')];
    for (const slug of slugs) expect((await owner.client.post(gateways(listed), { slug, name: slug })).status).toBe(201);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { status: number; body: { data: { slug: string }[]; nextCursor: string | null } } = await member.client.get(
        `${gateways(listed)}?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((g) => g.slug));
      cursor = page.body.nextCursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(2);
    expect(seen).toEqual([...slugs].sort());

    expect((await staff.client.get(gateways(listed))).status).toBe(200);
    expect((await outsider.client.get(gateways(listed))).status).toBe(404);
    expect((await member.client.get(`${gateways(listed)}?cursor=not-a-cursor`)).status).toBe(400);
    // Another team's gateways never appear.
    const other = await outsider.client.get(gateways(otherTeam));
    // None of them: `not.arrayContaining(slugs)` would pass with all but one of them leaked.
    expect(other.body.data.map((g: { slug: string }) => g.slug).filter((slug: string) => slugs.includes(slug))).toEqual([]);
  });

  it('reads a gateway by id or slug within its team; 404 from another team or for outsiders', async () => {
    const slug = unique('read');
    const created = (await owner.client.post(gateways(), { slug, name: 'Read me' })).body.data;
    const byId = await member.client.get(`${gateways()}/${created.id}`);
    expect(byId.status).toBe(200);
    expect(byId.body.data).toEqual(created);
    expect(byId.headers.get('etag')).toBe('"1"');
    const bySlug = await editor.client.get(`${gateways()}/${slug}`);
    expect(bySlug.status).toBe(200);
    expect(bySlug.body.data.id).toBe(created.id);
    expect((await staff.client.get(`${gateways()}/${slug}`)).status).toBe(200);

    expect((await outsider.client.get(`${gateways()}/${slug}`)).status).toBe(404);
    // The outsider's own team does not own it: the same 404 as an unknown gateway.
    const viaOtherTeam = await outsider.client.get(`${gateways(otherTeam)}/${created.id}`);
    expect(viaOtherTeam.status).toBe(404);
    expect((await outsider.client.get(`${gateways(otherTeam)}/${slug}`)).status).toBe(404);
    expect((await member.client.get(`${gateways()}/${unique('nope')}`)).status).toBe(404);
    expect((await member.client.get(`${gateways()}/Not_A_Slug`)).status).toBe(404);
  });

  it('refuses API keys (sessions only)', async () => {
    const key = await member.client.post(`/v1/teams/${team}/api-keys`, { name: 'k', kind: 'personal', scopes: ['query'] });
    expect(key.status).toBe(201);
    const response = await fetch(platform.url(gateways()), { headers: { authorization: `Bearer ${key.body.data.key}` } });
    expect(response.status).toBe(403);
  });
});
