import { eventually } from '@platform/test';
import { MAX_CAPABILITIES_PER_SERVER } from '../../src/domain/discovery';
import { capabilityTestbed } from './testbed';
import { startUpstream, type Upstream } from './upstream';

/** The test upstream offers a resource, a resource template and a prompt besides its tools. */
const OTHER_CAPABILITIES = 3;
const tools = (count: number) => Array.from({ length: count }, (_, n) => ({ name: `tool${String(n).padStart(5, '0')}`, description: 'A tool' }));
const REFUSED = "The MCP server's answer was refused (protocol_error): it lists more than 10,000 capabilities, the most the platform takes from one server";

/** How many capabilities one upstream can make the catalog hold: MAX_CAPABILITIES_PER_SERVER, all kinds together. */
describe('the bound on a server\'s capabilities', () => {
  const testbed = capabilityTestbed();
  let upstream: Upstream;
  beforeAll(async () => {
    upstream = await startUpstream('X-Upstream-Key');
  });
  afterAll(() => upstream?.close());

  const newServer = () => testbed().register('large', upstream.url);
  const refresh = (id: string) => testbed().owner.client.post(`/v1/teams/${testbed().team}/mcp-servers/${id}/refresh`);
  const serverView = async (id: string) => (await testbed().owner.client.get(`/v1/teams/${testbed().team}/mcp-servers/${id}`)).body.data;
  const stored = async (id: string) =>
    (
      await testbed().db.query<{ present: number; gone: number }>(
        `SELECT count(*) FILTER (WHERE gone_at IS NULL)::int AS present, count(*) FILTER (WHERE gone_at IS NOT NULL)::int AS gone
           FROM catalog.capabilities WHERE server_id = $1`,
        [id],
      )
    ).rows[0];

  it('takes a server offering exactly the bound', async () => {
    upstream.state.tools = tools(MAX_CAPABILITIES_PER_SERVER - OTHER_CAPABILITIES);
    const id = await newServer();
    const refreshed = await refresh(id);
    expect([refreshed.status, refreshed.body.data?.length ?? refreshed.body.error]).toEqual([200, 50]);
    expect(await stored(id)).toEqual({ present: MAX_CAPABILITIES_PER_SERVER, gone: 0 });
  }, 60_000);

  it('refuses an upstream offering one more, across kinds, and stores nothing of it', async () => {
    upstream.state.tools = tools(MAX_CAPABILITIES_PER_SERVER - OTHER_CAPABILITIES + 1);
    const id = await newServer();
    const refused = await refresh(id);
    expect([refused.status, refused.body.error?.code, refused.body.error?.message]).toEqual([503, 'unavailable', REFUSED]);
    expect(await serverView(id)).toMatchObject({ lastRefreshError: REFUSED, refreshedAt: null, counts: { tools: 0, resources: 0, resourceTemplates: 0, prompts: 0 } });
    expect(await stored(id)).toEqual({ present: 0, gone: 0 });
    const entry = await eventually(
      async () => ((await testbed().owner.client.get(`/v1/teams/${testbed().team}/audit?action=mcp_server.refresh`)).body.data ?? []).find((item: { targetId: string }) => item.targetId === id),
      'a failed mcp_server.refresh audit entry',
    );
    expect(entry.metadata).toEqual({ outcome: 'failed', errorClass: 'protocol_error' });
  }, 60_000);

  it('keeps what a server had when it grows past the bound: nothing is added and nothing goes', async () => {
    upstream.state.tools = tools(5);
    const id = await newServer();
    expect((await refresh(id)).status).toBe(200);
    const before = await serverView(id);
    upstream.state.tools = tools(MAX_CAPABILITIES_PER_SERVER + 1);
    expect((await refresh(id)).status).toBe(503);
    expect(await serverView(id)).toMatchObject({ lastRefreshError: REFUSED, refreshedAt: before.refreshedAt, counts: before.counts });
    expect(await stored(id)).toEqual({ present: 5 + OTHER_CAPABILITIES, gone: 0 });
    // The next discovery within the bound succeeds again and clears the error.
    upstream.state.tools = tools(6);
    expect((await refresh(id)).status).toBe(200);
    expect(await serverView(id)).toMatchObject({ lastRefreshError: null, counts: { tools: 6 } });
  }, 60_000);
});
