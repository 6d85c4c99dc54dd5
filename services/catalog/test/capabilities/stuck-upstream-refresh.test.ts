import { eventually, unique, type RawUpstream } from '@platform/test';
import { startEndpointlessSseUpstream, startTricklingUpstream } from './raw-upstream';
import { capabilityTestbed } from './testbed';

const TIMED_OUT = 'The MCP server could not be reached: timeout';

/**
 * An upstream can hold a step of the SDK client's `connect` that no request timeout covers, by sending a byte now
 * and then. A refresh still ends within the server's timeout (plus the rest of its steps), as a timeout, recorded
 * on the server and audited like any failure (docs/catalog.md, Health checks and scheduled discovery).
 */
describe('a refresh of an upstream that holds the connection open', () => {
  const testbed = capabilityTestbed();
  const upstreams: RawUpstream[] = [];
  afterAll(() => Promise.allSettled(upstreams.map((upstream) => upstream.close())));

  async function refreshFails(upstream: RawUpstream, transport: string): Promise<void> {
    upstreams.push(upstream);
    const { owner, team } = testbed();
    const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: 'Stuck', slug: unique('stuck'), url: upstream.url, transport, timeoutSeconds: 2 });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    const refreshed = await owner.client.post(`/v1/teams/${team}/mcp-servers/${id}/refresh`);
    expect([refreshed.status, refreshed.body.error?.code, refreshed.body.error?.message]).toEqual([503, 'unavailable', TIMED_OUT]);
    const server = (await owner.client.get(`/v1/teams/${team}/mcp-servers/${id}`)).body.data;
    expect(server).toMatchObject({ lastRefreshError: TIMED_OUT, refreshedAt: null });
    const entry = await eventually(
      async () => ((await owner.client.get(`/v1/teams/${team}/audit?action=mcp_server.refresh`)).body.data ?? []).find((item: { targetId: string }) => item.targetId === id),
      'a failed mcp_server.refresh audit entry',
    );
    expect(entry.metadata).toEqual({ outcome: 'failed', errorClass: 'timeout' });
  }

  // Without a bound on the whole exchange, each of these waited for ever (the discovery budget is not seen by these steps).
  it('times out an upstream that answers notifications/initialized with a body that never ends', async () => {
    await refreshFails(await startTricklingUpstream(), 'streamable-http');
  }, 45_000);

  it('times out an SSE upstream whose stream never names its endpoint', async () => {
    await refreshFails(await startEndpointlessSseUpstream(), 'sse');
  }, 45_000);
});
