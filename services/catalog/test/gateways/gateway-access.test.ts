import type { ServiceClients } from '@platform/runtime';
import { adminClient, grpcClients, newPerson, newTeam, startTestPlatform, unique, type ApiClient, type TestPerson, type TestPlatform } from '@platform/test';

/**
 * CheckGatewayAccess over gRPC, as the OAuth server and /mcp ask it: allowed only for an enabled gateway and an
 * active member of its team; every refusal is the same bare `{allowed: false}`.
 */
describe('gateway access', () => {
  let platform: TestPlatform;
  let clients: ServiceClients;
  let admin: ApiClient;
  let owner: TestPerson;
  let member: TestPerson;
  let outsider: TestPerson;
  let team: string;
  let gateway: { id: string; slug: string; teamId: string };

  beforeAll(async () => {
    platform = await startTestPlatform();
    clients = grpcClients(platform);
    admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    member = await newPerson(platform, admin, 'member');
    outsider = await newPerson(platform, admin, 'outsider');
    team = await newTeam(admin, owner, [[member, 'member']]);
    await newTeam(admin, outsider);
    const created = await owner.client.post(`/v1/teams/${team}/gateways`, { slug: unique('tools'), name: 'Tools' });
    if (created.status !== 201) throw new Error(`create gateway failed: ${created.status} ${JSON.stringify(created.body)}`);
    gateway = created.body.data;
  }, 120_000);
  afterAll(async () => {
    await clients?.close();
    await platform?.stop();
  });

  const check = (slug: string, personId: string) => clients.catalog.checkGatewayAccess({ slug, personId });
  const REFUSED = { allowed: false };

  it('allows a member of the gateway\'s team, with the gateway', async () => {
    const answer = await check(gateway.slug, member.id);
    expect(answer.allowed).toBe(true);
    expect(answer.gateway).toMatchObject({ id: gateway.id, slug: gateway.slug, teamId: gateway.teamId, enabled: true, revision: '1' });
    expect((await check(gateway.slug, owner.id)).allowed).toBe(true);
  });

  it('refuses a person outside the team, an unknown slug and malformed input alike', async () => {
    expect(await check(gateway.slug, outsider.id)).toEqual(REFUSED);
    expect(await check(unique('unknown'), member.id)).toEqual(REFUSED);
    expect(await check('Not A Slug', member.id)).toEqual(REFUSED);
    expect(await check(gateway.slug, 'not-a-uuid')).toEqual(REFUSED);
    expect(await check(gateway.slug, '6f1c2a52-8d8e-4c1e-9d7a-3b2a1c0d9e8f')).toEqual(REFUSED);
  });

  it('refuses everyone for a disabled gateway, its team\'s owner included', async () => {
    const created = await owner.client.post(`/v1/teams/${team}/gateways`, { slug: unique('off'), name: 'Off', enabled: false });
    expect(created.status).toBe(201);
    expect(await check(created.body.data.slug, owner.id)).toEqual(REFUSED);
    expect(await check(created.body.data.slug, member.id)).toEqual(REFUSED);
  });

  it('refuses a suspended person, and allows them again once reactivated', async () => {
    const person = await newPerson(platform, admin, 'suspended');
    expect((await admin.post(`/v1/teams/${team}/members`, { personId: person.id, role: 'member' })).status).toBe(201);
    expect((await check(gateway.slug, person.id)).allowed).toBe(true);

    const read = await admin.get(`/v1/admin/people/${person.id}`);
    const suspended = await admin.patch(`/v1/admin/people/${person.id}`, { status: 'suspended' }, { 'if-match': read.headers.get('etag')! });
    expect(suspended.status).toBe(200);
    expect(await check(gateway.slug, person.id)).toEqual(REFUSED);

    const reactivated = await admin.patch(`/v1/admin/people/${person.id}`, { status: 'active' }, { 'if-match': suspended.headers.get('etag')! });
    expect(reactivated.status).toBe(200);
    expect((await check(gateway.slug, person.id)).allowed).toBe(true);
  });

  it('refuses everyone while the gateway\'s team is archived, and allows them again once it is unarchived', async () => {
    const archivable = await newTeam(admin, owner, [[member, 'member']]);
    const created = await owner.client.post(`/v1/teams/${archivable}/gateways`, { slug: unique('archived'), name: 'Archived' });
    expect(created.status).toBe(201);
    const slug = created.body.data.slug as string;
    expect((await check(slug, member.id)).allowed).toBe(true);
    const setArchived = async (archived: boolean) => {
      const read = await owner.client.get(`/v1/teams/${archivable}`);
      const changed = await owner.client.patch(`/v1/teams/${archivable}`, { archived }, { 'if-match': read.headers.get('etag')! });
      expect(changed.status).toBe(200);
    };
    await setArchived(true);
    expect(await check(slug, member.id)).toEqual(REFUSED);
    expect(await check(slug, owner.id)).toEqual(REFUSED);
    await setArchived(false);
    expect((await check(slug, member.id)).allowed).toBe(true);
  });

  it('refuses a person once they are removed from the team', async () => {
    const person = await newPerson(platform, admin, 'leaver');
    expect((await admin.post(`/v1/teams/${team}/members`, { personId: person.id, role: 'editor' })).status).toBe(201);
    expect((await check(gateway.slug, person.id)).allowed).toBe(true);
    expect((await owner.client.delete(`/v1/teams/${team}/members/${person.id}`)).status).toBe(204);
    expect(await check(gateway.slug, person.id)).toEqual(REFUSED);
  });
});
