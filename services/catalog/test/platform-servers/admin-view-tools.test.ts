import { adminClient, newPerson, newTeam, startTestPlatform, unique, type ApiClient, type TestPerson, type TestPlatform } from '@platform/test';
import { ADMIN_VIEW_TOOLS } from '../../src/store/platform-servers-store';
import { startUpstream, type Upstream } from '../capabilities/upstream';
import { adminPath, type AdminServerJson } from './support';

type Tool = AdminServerJson['tools'][number];

/** Cuts to so many characters (code points, as PostgreSQL counts them, not UTF-16 units). */
const cut = (text: string, chars: number) => Array.from(text).slice(0, chars).join('');
const bytesOf = (tool: Tool) => Buffer.byteLength(tool.name) + Buffer.byteLength(tool.title) + Buffer.byteLength(tool.description);
const shown = (tool: Tool): Tool => ({
  name: cut(tool.name, ADMIN_VIEW_TOOLS.nameChars),
  title: cut(tool.title, ADMIN_VIEW_TOOLS.titleChars),
  description: cut(tool.description, ADMIN_VIEW_TOOLS.descriptionChars),
});

/**
 * The admin view (§2.4) of a server with many tools and long texts: the first tools by name, each text cut, and no
 * more than a bounded number of bytes per server, so one team's servers cannot push a page of the platform admins'
 * list past the services' message size.
 */
describe('the admin view of a server with many tools and long descriptions', () => {
  let platform: TestPlatform;
  let admin: ApiClient;
  let owner: TestPerson;
  let team: string;
  const upstreams: Upstream[] = [];

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' } });
    admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
    await Promise.all(upstreams.map((upstream) => upstream.close()));
  });

  /** A server of the team on a test upstream listing `tools`, discovered; returns its id. */
  async function serverListing(tools: { name: string; description: string }[]): Promise<string> {
    const upstream = await startUpstream('X-Upstream-Key');
    upstreams.push(upstream);
    upstream.state.tools = tools;
    const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: 'Many tools', slug: unique('many'), url: upstream.url, timeoutSeconds: 30 });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    expect((await owner.client.post(`/v1/teams/${team}/mcp-servers/${id}/refresh`)).status).toBe(200);
    return id;
  }

  /** The server's present tools in full, in list order (by name), through the capabilities list. */
  async function allToolsOf(serverId: string): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor = '';
    do {
      const page = await admin.get(`/v1/teams/${team}/mcp-servers/${serverId}/capabilities?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      for (const item of page.body.data as (Tool & { kind: string })[]) if (item.kind === 'tool') tools.push({ name: item.name, title: item.title, description: item.description });
      cursor = page.body.nextCursor ?? '';
    } while (cursor);
    return tools;
  }

  /** The server as the admin list (filtered to the team) and the admin read show it: the same both ways. */
  async function adminViewOf(serverId: string): Promise<AdminServerJson> {
    const listed = await admin.get(`/v1/admin/mcp-servers?team=${team}&limit=200`);
    expect(listed.status).toBe(200);
    const inList = (listed.body.data as AdminServerJson[]).find((server) => server.id === serverId);
    const read = await admin.get(adminPath(serverId));
    expect(read.status).toBe(200);
    expect(inList).toEqual(read.body.data);
    return read.body.data as AdminServerJson;
  }

  it('shows the first tools by name with their names, titles and descriptions cut, and counts them all elsewhere', async () => {
    const count = ADMIN_VIEW_TOOLS.perServer + 50;
    const tools = Array.from({ length: count }, (_, n) => ({ name: `tool${String(n).padStart(4, '0')}`, description: `Tool ${n}: ${'d'.repeat(5_000)}` }));
    // A name (and so a title) past the cut, first by name; a description starting with characters outside the BMP.
    tools[0]!.name = `tool0000_${'n'.repeat(400)}`;
    tools[1]!.description = `${'🙂'.repeat(3)}${'e'.repeat(4_000)}`;
    const serverId = await serverListing(tools);

    const all = await allToolsOf(serverId);
    expect(all).toHaveLength(count);
    const view = await adminViewOf(serverId);
    expect(view.tools).toHaveLength(ADMIN_VIEW_TOOLS.perServer);
    expect(view.tools).toEqual(all.slice(0, ADMIN_VIEW_TOOLS.perServer).map(shown));
    const longName = view.tools.find((tool) => tool.name.startsWith('tool0000_'))!;
    expect([longName.name.length, longName.title.length]).toEqual([ADMIN_VIEW_TOOLS.nameChars, ADMIN_VIEW_TOOLS.titleChars]);
    expect(view.tools.find((tool) => tool.name === 'tool0001')!.description).toBe(`${'🙂'.repeat(3)}${'e'.repeat(ADMIN_VIEW_TOOLS.descriptionChars - 3)}`);
    for (const tool of view.tools.filter((each) => each.name !== 'tool0001')) expect(tool.description).toHaveLength(ADMIN_VIEW_TOOLS.descriptionChars);
    // Every tool is still counted (and listed, above) where the team's view of the server says so.
    expect((await admin.get(`/v1/teams/${team}/mcp-servers/${serverId}`)).body.data.counts.tools).toBe(count);
  }, 120_000);

  it('shows fewer tools when their texts pass the bytes a server may take, always a prefix by name', async () => {
    // Four bytes a character: 100 such tools cut to 1,000 characters would take about 400 KB.
    const tools = Array.from({ length: ADMIN_VIEW_TOOLS.perServer }, (_, n) => ({ name: `wide${String(n).padStart(3, '0')}`, description: '🙂'.repeat(2_000) }));
    const serverId = await serverListing(tools);

    const expected: Tool[] = [];
    let bytes = 0;
    for (const tool of (await allToolsOf(serverId)).map(shown)) {
      bytes += bytesOf(tool);
      if (bytes > ADMIN_VIEW_TOOLS.bytesPerServer) break;
      expected.push(tool);
    }
    const view = await adminViewOf(serverId);
    expect(view.tools.length).toBeGreaterThan(0);
    expect(view.tools.length).toBeLessThan(ADMIN_VIEW_TOOLS.perServer);
    expect(view.tools).toEqual(expected);
  }, 120_000);
});
