import { randomUUID } from 'node:crypto';
import { adminClient, type ApiClient, newPerson, newTeam, startTestPlatform, type TestPerson, type TestPlatform } from '@platform/test';

/** A cursor as a client could make one: base64url JSON, as the server's are, holding whatever it likes. */
const forged = (position: unknown): string => Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');

/** A creation instant as `created_at::text` prints it, and dates, times and offsets that cannot be one. */
const INSTANT = '2024-05-01 12:00:00.123456+00';
const IMPOSSIBLE_INSTANTS = [
  '2024-02-31 00:00:00+00', // no such day
  '2023-02-29 00:00:00+00', // not a leap year
  '2024-13-01 00:00:00+00',
  '2024-01-01 25:00:00+00',
  '2024-01-01 00:61:00+00',
  '2024-01-01 00:00:00+99', // beyond PostgreSQL's ±15:59
  '0000-01-01 00:00:00+00', // PostgreSQL has no year 0
];

/**
 * docs/api.md, Pagination: a cursor the server did not make answers 400 naming `cursor`. Cursors are base64url
 * JSON, so a client can make one of the right shape holding what PostgreSQL cannot read (a NUL, an impossible
 * timestamp); each list's cursor shape is forged here through the real edge, none may reach the database.
 */
describe('forged list cursors', () => {
  let platform: TestPlatform;
  let admin: ApiClient;
  let owner: TestPerson;
  let team: string;
  let accountId: string;

  beforeAll(async () => {
    platform = await startTestPlatform();
    admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'cursor-owner');
    team = await newTeam(admin, owner);
    const account = await owner.client.post(`/v1/teams/${team}/service-accounts`, { name: 'cursor-bot' });
    expect(account.status).toBe(201);
    accountId = account.body.data.id;
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
  });

  async function expectRefused(client: ApiClient, list: string, position: unknown): Promise<void> {
    const response = await client.get(`${list}?cursor=${forged(position)}`);
    expect({ list, position, status: response.status }).toEqual({ list, position, status: 400 });
    expect(response.body.error.code).toBe('invalid_request');
    expect(response.body.error.fields).toEqual([{ field: 'cursor', problem: 'malformed cursor' }]);
  }

  it('people ({e}): a NUL in the email is a 400', async () => {
    await expectRefused(admin, '/v1/admin/people', { e: 'a\u0000b@example.test' });
  });

  it('teams ({slug}): a NUL in the slug is a 400', async () => {
    await expectRefused(owner.client, '/v1/teams', { slug: 'team\u0000' });
    await expectRefused(admin, '/v1/teams', { slug: '\u0000' });
  });

  it('members ({email, id}): a NUL in the email is a 400', async () => {
    await expectRefused(owner.client, `/v1/teams/${team}/members`, { email: 'a\u0000@example.test', id: randomUUID() });
  });

  it('API keys ([instant, id]): an impossible instant or a NUL is a 400', async () => {
    for (const list of [`/v1/teams/${team}/api-keys`, `/v1/teams/${team}/service-accounts/${accountId}/keys`]) {
      for (const instant of IMPOSSIBLE_INSTANTS) await expectRefused(owner.client, list, [instant, 'abcdefghijklmnop']);
      await expectRefused(owner.client, list, [INSTANT, 'abcdefgh\u0000ijklmno']);
      await expectRefused(owner.client, list, [`${INSTANT}\u0000`, 'abcdefghijklmnop']);
      // The same shape with a real instant is a position like any other: an empty page after it.
      const readable = await owner.client.get(`${list}?cursor=${forged([INSTANT, 'abcdefghijklmnop'])}`);
      expect(readable.status).toBe(200);
    }
  });

  it('service accounts ([instant, uuid]): an impossible instant is a 400', async () => {
    const list = `/v1/teams/${team}/service-accounts`;
    for (const instant of IMPOSSIBLE_INSTANTS) await expectRefused(owner.client, list, [instant, randomUUID()]);
    expect((await owner.client.get(`${list}?cursor=${forged([INSTANT, randomUUID()])}`)).status).toBe(200);
  });

  it('the pages the server makes still follow one another', async () => {
    await owner.client.post(`/v1/teams/${team}/service-accounts`, { name: 'cursor-bot-2' });
    for (let i = 0; i < 2; i++) expect((await owner.client.post(`/v1/teams/${team}/api-keys`, { name: `k${i}`, kind: 'personal', scopes: ['query'] })).status).toBe(201);
    for (const list of [`/v1/teams/${team}/service-accounts`, `/v1/teams/${team}/api-keys`]) {
      const first = await owner.client.get(`${list}?limit=1`);
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const second = await owner.client.get(`${list}?limit=1&cursor=${first.body.nextCursor}`);
      expect(second.status).toBe(200);
      expect(second.body.data).toHaveLength(1);
      expect(second.body.data[0].id).not.toBe(first.body.data[0].id);
    }
  });

  it("the catalog's lists ({slug}, {slug, id}, {before}) share the reader: a NUL is a 400", async () => {
    await expectRefused(owner.client, `/v1/teams/${team}/gateways`, { slug: 'gw\u0000' });
    await expectRefused(owner.client, `/v1/teams/${team}/mcp-servers`, { slug: 'server\u0000' });
    await expectRefused(owner.client, `/v1/teams/${team}/catalog`, { slug: 'server', id: `${randomUUID()}\u0000` });
    await expectRefused(admin, '/v1/admin/mcp-servers', { slug: 'server\u0000', id: randomUUID() });
    await expectRefused(owner.client, `/v1/teams/${team}/calls`, { before: '42\u0000' });
  });
});
