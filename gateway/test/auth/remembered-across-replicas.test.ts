import { connectionName } from '@platform/runtime';
import {
  adminClient,
  ApiClient,
  describeWith,
  killRedisConnections,
  newPerson,
  newTeam,
  startEdgeReplica,
  startTestPlatform,
  type TestPerson,
  type TestPlatform,
} from '@platform/test';

/**
 * Edges remember who a credential is (AUTH_CACHE_SECONDS, default 10 s) and follow the auth generation in memory
 * through a Redis subscription. A change made through one replica must still take effect at the next request on
 * another, including when the other's subscriber connection has just dropped (it then reads the generation from
 * Redis until it has re-subscribed, and forgets everything remembered before). The replica is a process of its own,
 * so it learns of a change only from the announcement, as another pod would (in one process, the gRPC answer that
 * tells the first replica would move the second's view too).
 */
describeWith('postgres', 'remembered authentication across edge replicas', () => {
  let platform: TestPlatform;
  let replica: Awaited<ReturnType<typeof startEdgeReplica>>;
  let owner: TestPerson;
  let team: string;

  beforeAll(async () => {
    platform = await startTestPlatform();
    replica = await startEdgeReplica(platform);
    const admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'remembered');
    team = await newTeam(admin, owner);
  }, 120_000);

  afterAll(async () => {
    await replica?.stop();
    await platform?.stop();
  });

  async function newKey(): Promise<{ id: string; viaReplica: ApiClient }> {
    const created = await owner.client.post(`/v1/teams/${team}/api-keys`, { name: 'replicated', kind: 'personal', scopes: ['query'] });
    expect(created.status).toBe(201);
    return { id: created.body.data.id, viaReplica: ApiClient.withApiKey({ url: replica.url, origin: platform.origin }, created.body.data.key) };
  }

  it('refuses a key revoked through one replica at its next request on the other', async () => {
    const { id, viaReplica } = await newKey();
    // Twice: the second answer comes from the replica's memory.
    expect((await viaReplica.get('/v1/me')).status).toBe(200);
    expect((await viaReplica.get('/v1/me')).status).toBe(200);

    expect((await owner.client.delete(`/v1/teams/${team}/api-keys/${id}`)).status).toBe(200);
    const refused = await viaReplica.get('/v1/me');
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('unauthenticated');
  });

  it('answers GET /v1/me with every change to the person, their teams and memberships at the next request on the other replica', async () => {
    const { viaReplica } = await newKey();
    const admin = await adminClient(platform);
    const me = async () => {
      const response = await viaReplica.get('/v1/me');
      expect(response.status).toBe(200);
      return response.body.data as { person: { displayName: string; lastSignInAt: string | null; revision: number }; teams: { team: { slug: string; name: string; memberCount: number }; role: string }[] };
    };
    const before = await me();
    expect((await me()).teams.map((t) => t.team.slug)).toEqual(before.teams.map((t) => t.team.slug));

    // A new team owned by them (team creation adds its owner).
    const other = await newTeam(admin, owner);
    expect((await me()).teams.find((t) => t.team.slug === other)).toMatchObject({ role: 'owner' });

    // Renamed, then joined by someone else (its member count).
    const current = await owner.client.get(`/v1/teams/${other}`);
    const renamed = await owner.client.patch(`/v1/teams/${other}`, { name: 'Renamed' }, { 'if-match': current.headers.get('etag')! });
    expect(renamed.status).toBe(200);
    expect((await me()).teams.find((t) => t.team.slug === other)?.team.name).toBe('Renamed');
    const colleague = await newPerson(platform, admin, 'colleague');
    expect((await admin.post(`/v1/teams/${other}/members`, { personId: colleague.id, role: 'member' })).status).toBe(201);
    expect((await me()).teams.find((t) => t.team.slug === other)?.team.memberCount).toBe(2);

    // Their own record: renamed by an admin, and a new sign-in.
    const person = await admin.get(`/v1/admin/people/${owner.id}`);
    const changed = await admin.patch(`/v1/admin/people/${owner.id}`, { displayName: 'Renamed Person' }, { 'if-match': person.headers.get('etag')! });
    expect(changed.status).toBe(200);
    expect((await me()).person.displayName).toBe('Renamed Person');
    const signedInBefore = (await me()).person.lastSignInAt;
    await new Promise((resolve) => setTimeout(resolve, 5)); // so the new sign-in's time differs
    expect((await new ApiClient(platform).signIn(owner.email, owner.password)).status).toBe(200);
    expect((await me()).person.lastSignInAt).not.toBe(signedInBefore);

    // The colleague removed again; then the team archived: it leaves their teams.
    expect((await owner.client.delete(`/v1/teams/${other}/members/${colleague.id}`)).status).toBe(204);
    expect((await me()).teams.find((t) => t.team.slug === other)?.team.memberCount).toBe(1);
    const team = await owner.client.get(`/v1/teams/${other}`);
    expect((await owner.client.patch(`/v1/teams/${other}`, { archived: true }, { 'if-match': team.headers.get('etag')! })).status).toBe(200);
    expect((await me()).teams.map((t) => t.team.slug)).not.toContain(other);
  });

  it('refuses a key revoked while the replica\'s subscriber connection is down', async () => {
    const { id, viaReplica } = await newKey();
    expect((await viaReplica.get('/v1/me')).status).toBe(200);
    expect((await viaReplica.get('/v1/me')).status).toBe(200);

    // Both processes share the key prefix, so this drops both subscriber connections; the revocation's message
    // is then lost to the replica (or reaches it after it re-subscribed, when its memory is void anyway).
    const name = connectionName(platform.env.REDIS_KEY_PREFIX ?? '', 'subscriber');
    expect(await killRedisConnections(platform.env.REDIS_URL!, name)).toBeGreaterThanOrEqual(1);
    expect((await owner.client.delete(`/v1/teams/${team}/api-keys/${id}`)).status).toBe(200);
    expect((await viaReplica.get('/v1/me')).status).toBe(401);
  });
});
