import { createClient } from 'redis';
import { describeWith, gatewayFronting, postMcp, startTestPlatform, type FrontedGateway, type TestPlatform } from '@platform/test';

/**
 * RFC 7009 revocation and the shared auth generation (docs/api.md, Authentication): a revocation that revoked
 * something moves it, so every edge stops trusting what it remembers; one that changed nothing (anyone may post any
 * string) leaves it, or each such request would send every edge's token checks back to identity.
 */
describeWith('redis', 'token revocation and the auth generation', () => {
  let platform: TestPlatform;
  let gateway: FrontedGateway;
  let redis: ReturnType<typeof createClient>;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    gateway = await gatewayFronting(platform, 'revoke', []);
    redis = createClient({ url: platform.env.REDIS_URL });
    await redis.connect();
  }, 120_000);
  afterAll(async () => {
    await redis?.quit();
    await platform?.stop();
  });

  const generation = () => redis.get(`${platform.env.REDIS_KEY_PREFIX}auth:generation`);
  const revoke = (token: string, clientId: string) =>
    fetch(platform.url('/oauth/revoke'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, client_id: clientId }).toString(),
    });

  it('leaves the generation where it was for a revocation that revoked nothing, and moves it for one that did', async () => {
    const before = await generation();
    expect(before).toEqual(expect.any(String));
    for (const token of ['svcat_garbage', 'svcrt_garbage', gateway.token]) {
      // Unknown tokens, and a live one of another client: nothing is revoked.
      expect((await revoke(token, 'someone-else')).status).toBe(200);
    }
    expect(await generation()).toBe(before);
    // The token still works (its check may be remembered).
    expect((await postMcp(platform, gateway, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(400);

    // The token's own client revokes it: the generation moves and the next request is refused.
    const clientId = await onlyConnectionClientId();
    expect((await revoke(gateway.token, clientId)).status).toBe(200);
    expect(await generation()).not.toBe(before);
    expect((await postMcp(platform, gateway, { jsonrpc: '2.0', id: 2, method: 'ping' })).status).toBe(401);
  });

  /** The client of the owner's one connection (the one its token was issued to), as the connections list names it. */
  async function onlyConnectionClientId(): Promise<string> {
    const connections = (await gateway.owner.get('/v1/me/connections')).body.data as { clientId: string }[];
    expect(connections).toHaveLength(1);
    return connections[0]!.clientId;
  }
});
