import { setTimeout as sleep } from 'node:timers/promises';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startStatelessMcpServer } from '@platform/test';
import { capabilityTestbed } from './testbed';

/** Longer than the platform's deadline for calls between services below, well within the server's own timeout. */
const LISTING_TAKES_MS = 4_000;

/**
 * A refresh waits as long as the server's discovery may take, not the deadline of ordinary calls between services
 * (GRPC_DEADLINE_MS), which is far shorter than the timeouts servers may have.
 */
describe('a refresh slower than the deadline of calls between services', () => {
  const testbed = capabilityTestbed({ GRPC_DEADLINE_MS: '2000' });
  let upstream: { url: string; close(): Promise<void> };
  beforeAll(async () => {
    upstream = await startStatelessMcpServer(() => {
      const server = new McpServer({ name: 'slow-lister', version: '1.0.0' });
      server.server.registerCapabilities({ tools: {} });
      server.server.setRequestHandler(ListToolsRequestSchema, async () => {
        await sleep(LISTING_TAKES_MS);
        return { tools: [{ name: 'slow', description: 'Listed slowly', inputSchema: { type: 'object' } }] };
      });
      return server;
    });
  });
  afterAll(() => upstream?.close());

  it('answers with what it discovered once the discovery ends, within the server\'s timeout', async () => {
    const id = await testbed().register('slow', upstream.url, 30);
    const refreshed = await testbed().owner.client.post(`/v1/teams/${testbed().team}/mcp-servers/${id}/refresh`);
    expect([refreshed.status, refreshed.body.data?.map((item: { name: string }) => item.name)]).toEqual([200, ['slow']]);
    const view = (await testbed().owner.client.get(`/v1/teams/${testbed().team}/mcp-servers/${id}`)).body.data;
    expect(view).toMatchObject({ lastRefreshError: null, counts: { tools: 1 } });
  }, 60_000);
});
