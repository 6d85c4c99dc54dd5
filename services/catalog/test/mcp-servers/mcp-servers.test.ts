import {
  adminClient,
  databaseOf,
  eventually,
  itOnRealInfrastructure,
  newRoleCast,
  newTeam,
  startTestPlatform,
  unique,
  type ApiClient,
  type TestPerson,
  type TestPlatform,
} from '@platform/test';

const FIELDS = [
  'authHeaderName', 'authMode', 'authValueHint', 'capabilitiesFingerprint', 'capturePayloads', 'counts', 'createdAt', 'description',
  'effectivePublishPolicy', 'enabled', 'hasAuth', 'health', 'id', 'lastRefreshError', 'name', 'oauth', 'pendingChanges',
  'publishRequestNote', 'publishRequestedAt', 'publishReviewNote', 'publishReviewedAt', 'publishReviewedByName',
  'publishState', 'refreshedAt', 'requirement', 'revision', 'sendIdentity', 'slug', 'teamId', 'teamName', 'teamSlug',
  'timeoutSeconds', 'transport', 'updatedAt', 'url',
];
const SECRET = 'Bearer s3cret-upstream-token-WXYZ';
// Public and resolvable without DNS: a literal address outside every refused range.
const PUBLIC_URL = 'https://1.1.1.1/mcp';

/** A team's MCP server records through the real edge: who may do what, validation, the address guard, the secret. */
describe('MCP servers', () => {
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

  const servers = (teamRef = team) => `/v1/teams/${teamRef}/mcp-servers`;
  const create = (client: ApiClient, body: Record<string, unknown> = {}, teamRef = team) =>
    client.post(servers(teamRef), { name: 'Search', slug: unique('srv'), url: PUBLIC_URL, ...body });

  it('registers a server with defaults, an ETag and its team, and never returns the secret', async () => {
    const slug = unique('search');
    const created = await create(owner.client, { slug, name: '  Search  ', authValue: SECRET });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body.data).sort()).toEqual(FIELDS);
    expect(created.body.data).toMatchObject({
      teamSlug: team,
      slug,
      name: 'Search',
      description: '',
      url: PUBLIC_URL,
      transport: 'streamable-http',
      authHeaderName: 'Authorization',
      hasAuth: true,
      authValueHint: 'WXYZ',
      // §2.3's auth fields: a static credential; no OAuth mode or provider requirement exists yet (docs/api.md).
      authMode: 'static',
      oauth: null,
      requirement: null,
      timeoutSeconds: 30,
      enabled: true,
      sendIdentity: false,
      capturePayloads: false,
      publishState: 'draft',
      effectivePublishPolicy: 'approval_required',
      publishRequestedAt: null,
      counts: { tools: 0, resources: 0, resourceTemplates: 0, prompts: 0 },
      pendingChanges: 0,
      refreshedAt: null,
      lastRefreshError: null,
      revision: 1,
    });
    expect(created.headers.get('etag')).toBe('"1"');
    expect(JSON.stringify(created.body)).not.toContain('s3cret');

    const read = await member.client.get(`${servers()}/${created.body.data.id}`);
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(created.body.data);
    expect(JSON.stringify(read.body)).not.toContain('s3cret');
  });

  it('takes every optional field', async () => {
    const created = await create(owner.client, {
      description: 'Finds things',
      transport: 'sse',
      authHeaderName: 'X-Api-Key',
      authValue: 'short',
      timeoutSeconds: 300,
      enabled: false,
      sendIdentity: true,
      capturePayloads: true,
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      description: 'Finds things',
      transport: 'sse',
      authHeaderName: 'X-Api-Key',
      hasAuth: true,
      // Too short to spare 4 characters.
      authValueHint: null,
      timeoutSeconds: 300,
      enabled: false,
      sendIdentity: true,
      capturePayloads: true,
    });
    const plain = await create(owner.client);
    expect(plain.body.data).toMatchObject({ hasAuth: false, authHeaderName: null, authValueHint: null, authMode: 'none', oauth: null, requirement: null });
  });

  it('lets team owners and admins change; members, editors and staff 403; outsiders 404; staff and members read', async () => {
    expect((await create(teamAdmin.client)).status).toBe(201);
    expect((await create(member.client)).status).toBe(403);
    expect((await create(editor.client)).status).toBe(403);
    expect((await create(outsider.client)).status).toBe(404);
    expect((await create(staff.client)).status).toBe(403);

    const id = (await create(owner.client)).body.data.id;
    const path = `${servers()}/${id}`;
    expect((await member.client.patch(path, { name: 'x' }, { 'if-match': '"1"' })).status).toBe(403);
    expect((await editor.client.delete(path)).status).toBe(403);
    expect((await outsider.client.get(path)).status).toBe(404);
    expect((await staff.client.get(path)).status).toBe(200);
    expect((await editor.client.get(servers())).status).toBe(200);
    expect((await outsider.client.get(servers())).status).toBe(404);
    // Another team's server is not found through this team.
    const elsewhere = (await create(outsider.client, {}, otherTeam)).body.data.id;
    expect((await owner.client.get(`${servers()}/${elsewhere}`)).status).toBe(404);
  });

  it('lists the team\'s servers by slug with cursor paging', async () => {
    const listTeam = await newTeam(admin, owner);
    const slugs = ['a-one', 'b-two', 'c-three'];
    for (const slug of [...slugs].reverse()) expect((await create(owner.client, { slug }, listTeam)).status).toBe(201);
    const first = await member.client.get(`${servers(listTeam)}?limit=2`);
    expect(first.status).toBe(404); // member is not in listTeam
    const page1 = await owner.client.get(`${servers(listTeam)}?limit=2`);
    expect(page1.body.data.map((s: { slug: string }) => s.slug)).toEqual(slugs.slice(0, 2));
    expect(page1.body.nextCursor).toEqual(expect.any(String));
    const page2 = await owner.client.get(`${servers(listTeam)}?limit=2&cursor=${page1.body.nextCursor}`);
    expect(page2.body.data.map((s: { slug: string }) => s.slug)).toEqual(slugs.slice(2));
    expect(page2.body.nextCursor).toBeNull();
  });

  it('names each bad field, and refuses unknown ones', async () => {
    const bad = await owner.client.post(servers(), {
      name: '',
      slug: 'Bad Slug',
      url: 'x'.repeat(2049),
      transport: 'stdio',
      timeoutSeconds: 0,
      description: 'd'.repeat(2001),
    });
    expect(bad.status).toBe(400);
    // The names in error.fields: a search of the whole body would also find them in its messages.
    const fields = new Set(bad.body.error.fields.map((f: { field: string }) => f.field));
    expect([...fields].sort()).toEqual(['description', 'name', 'slug', 'timeoutSeconds', 'transport', 'url']);
    expect((await create(owner.client, { colour: 'red' })).status).toBe(400);
    const header = await create(owner.client, { authHeaderName: 'X-Key' });
    expect(header.status).toBe(400);
    expect(JSON.stringify(header.body)).toContain('authHeaderName');
    const badHeader = await create(owner.client, { authHeaderName: 'Bad Header', authValue: SECRET });
    expect(badHeader.status).toBe(400);
  });

  it('refuses a credential a request header cannot carry (not visible ASCII, space or tab) with a 400 naming authValue, never the value', async () => {
    const created = (await create(owner.client, { authValue: SECRET })).body.data;
    // Above U+00FF fetch cannot send it at all; U+0080 to U+00FF (obs-text) each server reads its own way.
    for (const authValue of ['Bearer price-in-\u20ac-token', 'Bearer caf\u00e9-token', 'Bearer bell\u0007token', 'Bearer tab\tand space ok\u{1f511}']) {
      const refused = await create(owner.client, { authValue });
      expect([JSON.stringify(authValue), refused.status, refused.body.error?.code]).toEqual([JSON.stringify(authValue), 400, 'invalid_request']);
      expect(refused.body.error.fields.map((f: { field: string }) => f.field)).toEqual(['authValue']);
      expect(JSON.stringify(refused.body)).not.toContain(authValue.slice(7, 14));
      const changed = await owner.client.patch(`${servers()}/${created.id}`, { authValue }, { 'if-match': '"1"' });
      expect([JSON.stringify(authValue), changed.status, changed.body.error?.fields?.map((f: { field: string }) => f.field)]).toEqual([
        JSON.stringify(authValue),
        400,
        ['authValue'],
      ]);
    }
    // Spaces and tabs inside are fine.
    expect((await create(owner.client, { authValue: 'Bearer a\tb c' })).status).toBe(201);
    expect((await owner.client.get(`${servers()}/${created.id}`)).body.data).toMatchObject({ revision: 1, authValueHint: 'WXYZ' });
  });

  it('keeps slugs unique within a team (409) but not across teams', async () => {
    const slug = unique('dup');
    expect((await create(owner.client, { slug })).status).toBe(201);
    const again = await create(owner.client, { slug });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('conflict');
    expect((await create(outsider.client, { slug }, otherTeam)).status).toBe(201);
    const other = (await create(owner.client)).body.data;
    const renamed = await owner.client.patch(`${servers()}/${other.id}`, { slug }, { 'if-match': '"1"' });
    expect(renamed.status).toBe(409);
  });

  it('refuses internal, metadata and plain-http public addresses with 422 address_not_allowed', async () => {
    for (const url of ['https://127.0.0.1/mcp', 'https://169.254.169.254/', 'http://127.0.0.1:8080/mcp', 'http://1.1.1.1/mcp', 'ftp://1.1.1.1/']) {
      const refused = await create(owner.client, { url });
      expect([url, refused.status, refused.body.error?.code]).toEqual([url, 422, 'address_not_allowed']);
    }
    const id = (await create(owner.client)).body.data.id;
    const changed = await owner.client.patch(`${servers()}/${id}`, { url: 'https://10.0.0.1/mcp' }, { 'if-match': '"1"' });
    expect(changed.status).toBe(422);
    expect(changed.body.error.code).toBe('address_not_allowed');
  });

  it('names ALLOWED_INTERNAL_NETWORKS when it could admit the refused address, never the metadata service', async () => {
    for (const url of ['http://127.0.0.1:8931/mcp', 'https://localhost/mcp', 'https://10.0.0.1/mcp']) {
      const refused = await create(owner.client, { url });
      expect([url, refused.status, refused.body.error?.message]).toEqual([url, 422, expect.stringContaining('ALLOWED_INTERNAL_NETWORKS')]);
      expect(refused.body.error.message).not.toMatch(/127\.0\.0\.1|::1|10\.0\.0\.1/);
    }
    const metadata = await create(owner.client, { url: 'https://169.254.169.254/' });
    expect([metadata.status, metadata.body.error?.code]).toEqual([422, 'address_not_allowed']);
    expect(metadata.body.error.message).not.toContain('ALLOWED_INTERNAL_NETWORKS');
  });

  it('changes fields at the expected revision: 428 without If-Match, 412 when stale', async () => {
    const created = (await create(owner.client)).body.data;
    const path = `${servers()}/${created.id}`;
    expect((await owner.client.patch(path, { name: 'New' })).status).toBe(428);
    expect((await owner.client.patch(path, { name: 'New' }, { 'if-match': '"7"' })).status).toBe(412);
    const changed = await teamAdmin.client.patch(path, { name: 'New', timeoutSeconds: 5, enabled: false, transport: 'sse' }, { 'if-match': '"1"' });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ name: 'New', timeoutSeconds: 5, enabled: false, transport: 'sse', revision: 2, slug: created.slug });
    expect(changed.headers.get('etag')).toBe('"2"');
    expect((await owner.client.patch(path, { name: 'Stale' }, { 'if-match': '"1"' })).status).toBe(412);
  });

  it('keeps the secret when authValue is omitted, replaces it when given, removes it with "", and audits only a flag', async () => {
    const created = (await create(owner.client, { authValue: SECRET })).body.data;
    const path = `${servers()}/${created.id}`;
    const kept = await owner.client.patch(path, { name: 'Renamed', authHeaderName: 'X-Token' }, { 'if-match': '"1"' });
    expect(kept.body.data).toMatchObject({ hasAuth: true, authValueHint: 'WXYZ', authHeaderName: 'X-Token', authMode: 'static' });
    const replaced = await owner.client.patch(path, { authValue: 'another-long-secret-1234' }, { 'if-match': '"2"' });
    expect(replaced.body.data).toMatchObject({ hasAuth: true, authValueHint: '1234', authHeaderName: 'X-Token' });
    const removed = await owner.client.patch(path, { authValue: '' }, { 'if-match': '"3"' });
    expect(removed.status).toBe(200);
    expect(removed.body.data).toMatchObject({ hasAuth: false, authValueHint: null, authHeaderName: null, authMode: 'none' });

    const entries = await eventually(async () => {
      const page = await owner.client.get(`/v1/teams/${team}/audit?action=mcp_server.update`);
      const mine = page.body.data?.filter((e: { targetId: string }) => e.targetId === created.id) ?? [];
      return mine.length === 3 ? mine : undefined;
    }, 'three mcp_server.update audit entries');
    const flags = entries.map((e: { after: { authValueChanged?: boolean } }) => e.after.authValueChanged ?? false).sort();
    expect(flags).toEqual([false, true, true]);
    expect(JSON.stringify(entries)).not.toMatch(/s3cret|another-long-secret/);
    const create_ = await eventually(async () => {
      const page = await owner.client.get(`/v1/teams/${team}/audit?action=mcp_server.create`);
      return page.body.data?.find((e: { targetId: string }) => e.targetId === created.id);
    }, 'the mcp_server.create audit entry');
    expect(create_).toMatchObject({ targetType: 'mcp_server', after: { hasAuth: true, url: PUBLIC_URL } });
    expect(JSON.stringify(create_)).not.toContain('s3cret');
  });

  // Looks into the database from outside, which embedded PGlite has no connection for.
  itOnRealInfrastructure('stores the secret only sealed (never in clear in the table or the outbox)', async () => {
    const db = await databaseOf(platform, { required: true });
    try {
      const created = (await create(owner.client, { authValue: SECRET })).body.data;
      const row = await db.query('SELECT * FROM catalog.mcp_servers WHERE id = $1', [created.id]);
      expect(row.rows).toHaveLength(1);
      expect(row.rows[0].auth_value_sealed).toEqual(expect.any(String));
      expect(JSON.stringify(row.rows)).not.toContain('s3cret');
      const outbox = await db.query('SELECT * FROM catalog.outbox');
      expect(JSON.stringify(outbox.rows)).toContain(created.id);
      expect(JSON.stringify(outbox.rows)).not.toContain('s3cret');
    } finally {
      await db.end();
    }
  });

  it('deletes a server (204), audited, after which it is gone', async () => {
    const created = (await create(owner.client)).body.data;
    const path = `${servers()}/${created.id}`;
    expect((await member.client.delete(path)).status).toBe(403);
    const deleted = await teamAdmin.client.delete(path);
    expect(deleted.status).toBe(204);
    expect((await owner.client.get(path)).status).toBe(404);
    expect((await owner.client.delete(path)).status).toBe(404);
    const entry = await eventually(async () => {
      const page = await owner.client.get(`/v1/teams/${team}/audit?action=mcp_server.delete`);
      return page.body.data?.find((e: { targetId: string }) => e.targetId === created.id);
    }, 'the mcp_server.delete audit entry');
    expect(entry.before).toMatchObject({ slug: created.slug });
  });

  it("documents §2.3's auth fields (and §2.5's) in the OpenAPI document, with their inner fields", async () => {
    const document = await owner.client.get('/v1/openapi.json');
    expect(document.status).toBe(200);
    const { McpServer: server, Capability: capability } = document.body.components.schemas;
    expect(server.properties.authMode.enum).toEqual(['none', 'static']);
    expect(server.properties.oauth.type).toEqual(['object', 'null']);
    expect(server.properties.oauth.properties.platformProvider.type).toEqual(['object', 'null']);
    expect(server.properties.requirement.type).toEqual(['object', 'null']);
    expect(Object.keys(server.properties.requirement.properties).sort()).toEqual(['providerEnabled', 'providerId', 'providerName', 'providerSlug', 'scopes']);
    expect(server.required).toEqual(expect.arrayContaining(['authMode', 'oauth', 'requirement']));
    expect(capability.properties.requires.type).toEqual(['object', 'null']);
    expect(Object.keys(capability.properties.requires.properties).sort()).toEqual(
      ['connected', 'providerId', 'providerKind', 'providerName', 'providerSlug', 'scopes'],
    );
    expect(capability.required).toEqual(expect.arrayContaining(['requirementOverride', 'requires']));
    // The platform admin view (§2.4) has its own field list, without them.
    const adminView = document.body.components.schemas.AdminMcpServer.properties;
    for (const field of ['authMode', 'oauth', 'requirement']) expect(adminView).not.toHaveProperty(field);
  });
});
