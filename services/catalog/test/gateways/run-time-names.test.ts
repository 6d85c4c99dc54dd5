import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  adminClient,
  connectMcpClient,
  expectEventually,
  gatewayAccessToken,
  newPerson,
  newTeam,
  startTestPlatform,
  unique,
  type ApiClient,
  type TestPerson,
  type TestPlatform,
} from '@platform/test';
import { approveAll, publish, refreshServer, registerServer } from './catalog-setup';
import { startUpstream, type Upstream } from './upstream';

/** The gateway's bound on resource URIs matched against templates (docs/gateway.md, What is exposed). */
const MAX_RESOURCE_URI_LENGTH = 4096;

/**
 * Exposed names stay with what a gateway already exposes, end to end through the real edge: a capability approved
 * later that collides at run time (a name, or a broader resource template) never takes over; and resource URIs are
 * bounded before template matching.
 */
describe('gateway names under run-time collisions', () => {
  let platform: TestPlatform;
  let admin: ApiClient;
  let owner: TestPerson;
  let team: string;
  let upM: Upstream;
  let upG: Upstream;
  let m: { id: string; slug: string };
  let client: Client;
  const textOf = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;
  const readText = async (uri: string) => ((await client.readResource({ uri })).contents[0] as { text: string }).text;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' } });
    admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
    upM = await startUpstream({ tools: { note: 'Note' } });
    upG = await startUpstream({ tools: { create_issue: 'Create an issue' }, templates: ['docs://g/{id}'] });
    m = await registerServer(owner, team, upM);
    const g = await registerServer(owner, team, upG);
    await publish(owner, admin, team, m.id);
    await publish(owner, admin, team, g.id);
    // M, without prefix, comes first: at configuration time nothing collides.
    const slug = unique('gw');
    const created = await owner.client.post(`/v1/teams/${team}/gateways`, { slug, name: 'Names', servers: [{ serverId: m.id, prefix: '' }, { serverId: g.id, prefix: 'github' }] });
    expect(created.status).toBe(201);
    ({ client } = await connectMcpClient(platform, slug, await gatewayAccessToken(platform, owner.client.cookieHeader(), slug)));
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await platform?.stop();
    await Promise.all([upM?.close(), upG?.close()]);
  });

  it('keeps a name and the URIs of a template with what held them when a colliding capability is approved later', async () => {
    expect(textOf(await client.callTool({ name: 'github__create_issue', arguments: { query: 'q' } }))).toBe('create_issue');
    expect(await readText('docs://g/7')).toBe('docs://g/{id} docs://g/7');

    // M's upstream now offers a tool under G's exposed name and a template that matches G's URIs too; both approved.
    upM.offer.tools = { note: 'Note', github__create_issue: 'Shadows G' };
    upM.offer.templates = ['docs://{+path}'];
    await refreshServer(owner, team, m.id);
    await approveAll(owner, admin, team, m.id);
    const listed = await owner.client.get(`/v1/teams/${team}/mcp-servers/${m.id}/capabilities`);
    expect((listed.body.data as { name: string; approved: boolean }[]).filter((c) => ['github__create_issue', 'docs://{+path}'].includes(c.name))).toEqual([
      expect.objectContaining({ name: 'github__create_issue', approved: true }),
      expect.objectContaining({ name: 'docs://{+path}', approved: true }),
    ]);
    await expectEventually(async () => expect((await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toContain('docs://{+path}'));

    // G keeps its name (the one listed, with its approved definition, and the one called); M's colliding tool stays hidden.
    const named = (await client.listTools()).tools.filter((tool) => tool.name === 'github__create_issue');
    expect(named).toEqual([expect.objectContaining({ description: 'Create an issue' })]);
    expect(textOf(await client.callTool({ name: 'github__create_issue', arguments: { query: 'q' } }))).toBe('create_issue');
    expect(textOf(await client.callTool({ name: 'note', arguments: { query: 'q' } }))).toBe('note');
    // G's template, approved first, still serves its URIs; M's broader one serves only the others.
    expect(await readText('docs://g/8')).toBe('docs://g/{id} docs://g/8');
    expect(await readText('docs://m/readme')).toBe('docs://{+path} docs://m/readme');
    expect(upM.templateReads).toEqual(['docs://m/readme']);
  });

  it('refuses a resource URI longer than the bound with invalid params and no upstream call, and reads one at the bound', async () => {
    const atBound = `docs://g/${'x'.repeat(MAX_RESOURCE_URI_LENGTH - 'docs://g/'.length)}`;
    const readsBefore = [upM.templateReads.length, upG.templateReads.length];
    const refused = await client.readResource({ uri: `${atBound}x` }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(-32602);
    expect((refused as McpError).message).toContain(`at most ${MAX_RESOURCE_URI_LENGTH} characters`);
    await expect(client.subscribeResource({ uri: `${atBound}x` })).rejects.toMatchObject({ code: -32602 });
    expect([upM.templateReads.length, upG.templateReads.length]).toEqual(readsBefore);

    expect(await readText(atBound)).toBe(`docs://g/{id} ${atBound}`);
    expect(upG.templateReads.at(-1)).toBe(atBound);
  });
});
