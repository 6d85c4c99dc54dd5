import type { ServiceClients } from '@platform/runtime';
import { adminClient, grpcClients, newPerson, newTeam, startTestPlatform, unique, type ApiClient, type TestPerson, type TestPlatform } from '@platform/test';
import { adminChange, PLATFORM_TEAM, registerServer } from './support';

interface CatalogEntry {
  id: string;
  slug: string;
  teamSlug: string;
  authHeaderName: string | null;
  authValueHint: string | null;
  hasAuth: boolean;
  publishState: string;
}

/** A team's catalog (GET /v1/teams/{team}/catalog): its own published servers plus platform servers offered to it. */
describe("a team's catalog", () => {
  let platform: TestPlatform;
  let admin: ApiClient;
  let platformAdmin: TestPerson;
  let owner: TestPerson;
  let member: TestPerson;
  let outsider: TestPerson;
  let staff: TestPerson;
  let loner: TestPerson;
  let teamA: string;
  let teamB: string;
  let personalSlug: string;
  let clients: ServiceClients;
  const ids: Record<string, string> = {};

  /** Publishes a platform server: the platform team publishes directly (its policy is always self_publish). */
  const publishPlatformServer = async (serverId: string) => {
    const published = await platformAdmin.client.post(`/v1/teams/${PLATFORM_TEAM}/mcp-servers/${serverId}/publish`, {});
    expect([published.status, published.body.data?.publishState]).toEqual([200, 'published']);
  };
  /** Publishes a team's server under the default policy: the owner asks, a platform admin approves. */
  const publishTeamServer = async (team: string, serverId: string) => {
    expect((await owner.client.post(`/v1/teams/${team}/mcp-servers/${serverId}/publish`, {})).status).toBe(200);
    const reviewed = await platformAdmin.client.post(`/v1/admin/mcp-servers/${serverId}/review`, { decision: 'approve' });
    expect([reviewed.status, reviewed.body.data?.publishState]).toEqual([200, 'published']);
  };
  /** Every catalog entry of a team, walking pages of `limit`. */
  const catalogOf = async (client: ApiClient, team: string, limit = 1): Promise<CatalogEntry[]> => {
    const entries: CatalogEntry[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page = await client.get(`/v1/teams/${team}/catalog?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      entries.push(...(page.body.data as CatalogEntry[]));
      cursor = page.body.nextCursor as string | null;
    }
    return entries;
  };
  const namesIn = (entries: CatalogEntry[]) => {
    const byId = new Map(Object.entries(ids).map(([name, id]) => [id, name]));
    return entries.map((entry) => byId.get(entry.id) ?? `unexpected ${entry.slug}`).sort();
  };

  beforeAll(async () => {
    platform = await startTestPlatform();
    clients = grpcClients(platform);
    admin = await adminClient(platform);
    platformAdmin = await newPerson(platform, admin, 'platform-admin', 'admin');
    owner = await newPerson(platform, admin, 'owner');
    member = await newPerson(platform, admin, 'member');
    outsider = await newPerson(platform, admin, 'outsider');
    staff = await newPerson(platform, admin, 'staff', 'staff');
    loner = await newPerson(platform, admin, 'loner');
    teamA = await newTeam(admin, owner, [[member, 'member']]);
    teamB = await newTeam(admin, outsider);
    personalSlug = (await loner.client.get('/v1/me')).body.data.personalTeam.slug;

    // Platform servers, each offered differently; all published unless named otherwise.
    ids.toAll = (await registerServer(platformAdmin.client, PLATFORM_TEAM, { authValue: 'platform-credential-1234' })).id;
    ids.toAllAndPersonal = (await registerServer(platformAdmin.client, PLATFORM_TEAM)).id;
    ids.toTeamA = (await registerServer(platformAdmin.client, PLATFORM_TEAM)).id;
    ids.toPersonal = (await registerServer(platformAdmin.client, PLATFORM_TEAM)).id;
    ids.toNobody = (await registerServer(platformAdmin.client, PLATFORM_TEAM)).id;
    ids.unpublished = (await registerServer(platformAdmin.client, PLATFORM_TEAM)).id;
    ids.disabled = (await registerServer(platformAdmin.client, PLATFORM_TEAM)).id;
    for (const name of ['toAll', 'toAllAndPersonal', 'toTeamA', 'toPersonal', 'toNobody', 'disabled']) await publishPlatformServer(ids[name]!);
    // Offered to all teams and named the personal workspace, a list op 16 keeps but does not apply under `all`.
    expect((await adminChange(platformAdmin.client, ids.toAll!, { teams: [personalSlug] })).status).toBe(200);
    expect((await adminChange(platformAdmin.client, ids.toAll!, { visibility: 'all' })).status).toBe(200);
    expect((await adminChange(platformAdmin.client, ids.toAllAndPersonal!, { visibility: 'all', personal: true })).status).toBe(200);
    expect((await adminChange(platformAdmin.client, ids.toTeamA!, { visibility: 'teams', teams: [teamA] })).status).toBe(200);
    expect((await adminChange(platformAdmin.client, ids.toPersonal!, { personal: true })).status).toBe(200);
    expect((await adminChange(platformAdmin.client, ids.unpublished!, { visibility: 'all' })).status).toBe(200);
    expect((await adminChange(platformAdmin.client, ids.disabled!, { visibility: 'all', enabled: false })).status).toBe(200);

    // Team A's own servers: one published, one still a draft.
    ids.ownPublished = (await registerServer(owner.client, teamA, { authValue: 'team-a-credential-5678' })).id;
    ids.ownDraft = (await registerServer(owner.client, teamA)).id;
    await publishTeamServer(teamA, ids.ownPublished);
  }, 180_000);
  afterAll(async () => {
    await clients?.close();
    await platform?.stop();
  });

  it('holds the team\'s own published servers and the published, enabled platform servers offered to it', async () => {
    expect(namesIn(await catalogOf(member.client, teamA))).toEqual(['ownPublished', 'toAll', 'toAllAndPersonal', 'toTeamA']);
    expect(namesIn(await catalogOf(outsider.client, teamB))).toEqual(['toAll', 'toAllAndPersonal']);
    // A personal workspace gets the platform servers offered to personal workspaces (`personal`), whatever their
    // visibility: `all` alone (toAll) reaches the other teams only.
    expect(namesIn(await catalogOf(loner.client, personalSlug))).toEqual(['toAllAndPersonal', 'toPersonal']);
    // The platform team's own catalog: its published, enabled servers.
    expect(namesIn(await catalogOf(platformAdmin.client, PLATFORM_TEAM, 50))).toEqual(['toAll', 'toAllAndPersonal', 'toNobody', 'toPersonal', 'toTeamA']);
  });

  it('lets a personal workspace name in its gateways only the platform servers offered to it', async () => {
    const gateways = `/v1/teams/${personalSlug}/gateways`;
    const refused = await loner.client.post(gateways, { slug: unique('personal-gw'), name: 'Mine', servers: [{ serverId: ids.toAll }] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('invalid_request');
    expect(refused.body.error.fields).toEqual([{ field: 'servers.0.serverId', problem: 'is not an MCP server offered to this team' }]);
    const slug = unique('personal-gw');
    const accepted = await loner.client.post(gateways, { slug, name: 'Mine', servers: [{ serverId: ids.toAllAndPersonal }, { serverId: ids.toPersonal }] });
    expect(accepted.status).toBe(201);
    // The gateway serves what is offered now: no longer `personal`, the `all` server leaves it.
    const served = async () => (await clients.catalog.resolveGateway({ slug })).servers.map((server) => server.id);
    expect(await served()).toEqual([ids.toAllAndPersonal, ids.toPersonal]);
    expect((await adminChange(platformAdmin.client, ids.toAllAndPersonal!, { personal: false })).status).toBe(200);
    try {
      expect(await served()).toEqual([ids.toPersonal]);
    } finally {
      expect((await adminChange(platformAdmin.client, ids.toAllAndPersonal!, { personal: true })).status).toBe(200);
    }
  });

  it('offers a `teams` server to a personal workspace it names, whether or not it is `personal`', async () => {
    expect((await adminChange(platformAdmin.client, ids.toNobody!, { teams: [personalSlug] })).status).toBe(200);
    expect(namesIn(await catalogOf(loner.client, personalSlug))).toEqual(['toAllAndPersonal', 'toNobody', 'toPersonal']);
    expect((await adminChange(platformAdmin.client, ids.toNobody!, { teams: [] })).status).toBe(200);
    expect(namesIn(await catalogOf(loner.client, personalSlug))).toEqual(['toAllAndPersonal', 'toPersonal']);
  });

  it("presents entries in the team view, a platform server under the platform team without its credential's details", async () => {
    const entries = await catalogOf(member.client, teamA, 50);
    const own = entries.find((entry) => entry.id === ids.ownPublished)!;
    expect(own).toMatchObject({ teamSlug: teamA, hasAuth: true, authHeaderName: 'Authorization', authValueHint: '5678', publishState: 'published' });
    const offered = entries.find((entry) => entry.id === ids.toAll)!;
    expect(offered).toMatchObject({ teamSlug: PLATFORM_TEAM, hasAuth: true, authHeaderName: null, authValueHint: null, publishState: 'published' });
    expect(JSON.stringify(entries)).not.toContain('credential');
  });

  it('follows op 16 at once: offering, withdrawing and disabling change the catalog', async () => {
    expect((await adminChange(platformAdmin.client, ids.toTeamA!, { teams: [teamA, teamB] })).status).toBe(200);
    expect(namesIn(await catalogOf(outsider.client, teamB))).toEqual(['toAll', 'toAllAndPersonal', 'toTeamA']);
    expect((await adminChange(platformAdmin.client, ids.toAll!, { enabled: false })).status).toBe(200);
    expect(namesIn(await catalogOf(outsider.client, teamB))).toEqual(['toAllAndPersonal', 'toTeamA']);
    expect((await adminChange(platformAdmin.client, ids.toTeamA!, { teams: [teamA] })).status).toBe(200);
    expect((await adminChange(platformAdmin.client, ids.toAll!, { enabled: true })).status).toBe(200);
    expect(namesIn(await catalogOf(outsider.client, teamB))).toEqual(['toAll', 'toAllAndPersonal']);
    // Back to `teams`, the list kept under `all` applies again: the personal workspace it names is offered it.
    expect((await adminChange(platformAdmin.client, ids.toAll!, { visibility: 'teams' })).status).toBe(200);
    expect(namesIn(await catalogOf(loner.client, personalSlug))).toEqual(['toAll', 'toAllAndPersonal', 'toPersonal']);
    expect(namesIn(await catalogOf(outsider.client, teamB))).toEqual(['toAllAndPersonal']);
    expect((await adminChange(platformAdmin.client, ids.toAll!, { visibility: 'all' })).status).toBe(200);
    // A rejected server leaves its team's catalog.
    expect((await platformAdmin.client.post(`/v1/admin/mcp-servers/${ids.ownPublished}/review`, { decision: 'reject' })).status).toBe(200);
    expect(namesIn(await catalogOf(member.client, teamA))).toEqual(['toAll', 'toAllAndPersonal', 'toTeamA']);
  });

  it('is read by team members and platform staff only', async () => {
    expect((await staff.client.get(`/v1/teams/${teamA}/catalog`)).status).toBe(200);
    expect((await outsider.client.get(`/v1/teams/${teamA}/catalog`)).status).toBe(404);
    expect((await member.client.get(`/v1/teams/${personalSlug}/catalog`)).status).toBe(404);
    expect((await member.client.get(`/v1/teams/${teamA}/catalog?cursor=bm90LWEtY3Vyc29y`)).status).toBe(400);
  });
});
