import { adminClient, newPerson, newTeam, startTestPlatform, unique, type TestPerson, type TestPlatform } from '@platform/test';

/** With ALLOWED_INTERNAL_NETWORKS, servers inside it may be registered, over plain http too; the metadata service never. */
describe('MCP servers on allowed internal networks', () => {
  let platform: TestPlatform;
  let owner: TestPerson;
  let team: string;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' } });
    const admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
  });

  const create = (url: string) => owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: 'Local', slug: unique('local'), url });

  it('accepts http and https to an allowed internal address', async () => {
    const http = await create('http://127.0.0.1:8931/mcp');
    expect(http.status).toBe(201);
    expect(http.body.data.url).toBe('http://127.0.0.1:8931/mcp');
    expect((await create('https://127.0.0.1/mcp')).status).toBe(201);
  });

  it('still refuses other internal ranges and the metadata service', async () => {
    for (const url of ['https://169.254.169.254/', 'http://10.0.0.1/mcp']) {
      const refused = await create(url);
      expect([url, refused.status, refused.body.error?.code]).toEqual([url, 422, 'address_not_allowed']);
    }
  });
});
