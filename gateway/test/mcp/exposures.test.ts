import { createCache, type Cache, type ServiceClients } from '@platform/runtime';
import { eventually, gatewayFronting, grpcClients, startMcpUpstream, startTestPlatform, type FrontedGateway, type McpUpstream, type TestPlatform } from '@platform/test';
import { GatewayExposures } from '../../src/mcp/exposures';

/**
 * A replica remembers what a gateway exposes only for a while after loading it (docs/gateway.md, What is exposed):
 * each entry holds its servers' unsealed headers and capability lists, so one that is no longer used must go, not
 * stay until an announcement happens to name its gateway. Real catalog and identity over gRPC.
 */
describe('GatewayExposures', () => {
  let platform: TestPlatform;
  let upstream: McpUpstream;
  let gateway: FrontedGateway;
  let clients: ServiceClients;
  let cache: Cache;

  beforeAll(async () => {
    upstream = await startMcpUpstream({ name: 'alpha' });
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.1/32', MCP_PUBLISH_POLICY: 'self_publish' } });
    gateway = await gatewayFronting(platform, 'exposures', [{ slug: 'alpha', url: upstream.url }]);
    clients = grpcClients(platform);
    const { config, logger } = platform.platform.context;
    cache = createCache(config.cache, logger);
  }, 120_000);

  afterAll(async () => {
    await clients?.close();
    await cache?.close();
    await platform?.stop();
    await upstream?.close();
  });

  it('forgets a gateway once it has gone unused past its time, and loads it again when asked', async () => {
    const exposures = new GatewayExposures(clients, platform.platform.context.logger, cache, 300);
    try {
      const loaded = await exposures.get(gateway.gatewaySlug);
      expect(loaded.exposure.lists.tools.map((tool) => tool.name)).toContain('alpha__echo');
      expect(exposures.size).toBe(1);
      await eventually(() => exposures.size, (size) => size === 0, 10_000);

      expect((await exposures.get(gateway.gatewaySlug)).exposure.lists.tools.map((tool) => tool.name)).toContain('alpha__echo');
      expect(exposures.size).toBe(1);
    } finally {
      exposures.close();
    }
  });
});
