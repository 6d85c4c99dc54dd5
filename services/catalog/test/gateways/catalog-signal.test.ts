import { createCache, onCatalogChange, type Cache } from '@platform/runtime';
import { adminClient, eventually, newPerson, newTeam, startTestPlatform, unique, type TestPerson, type TestPlatform } from '@platform/test';

/**
 * Gateway changes tell every edge, through the cache's pub/sub, which gateway's resolved configuration to drop.
 * Listened to from outside the platform, as another replica's edge would, so this needs Redis.
 */
describe('catalog change signal of gateway changes', () => {
  let platform: TestPlatform;
  let signals: Cache;
  let owner: TestPerson;
  let team: string;
  const seen: string[][] = [];
  let unsubscribe: () => Promise<void>;

  beforeAll(async () => {
    platform = await startTestPlatform();
    const { config, logger } = platform.platform.context;
    if (config.cache.kind !== 'redis') throw new Error('this test needs Redis (source ~/.cache/mcp-platform/test.env)');
    signals = createCache(config.cache, logger);
    unsubscribe = await onCatalogChange(signals, (ids) => seen.push(ids));
    const admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
  }, 120_000);
  afterAll(async () => {
    await unsubscribe?.();
    await signals?.close();
    await platform?.stop();
  });

  const announced = (gatewayId: string) => eventually(() => seen.some((ids) => ids.includes(gatewayId)), `the signal naming ${gatewayId}`);

  it('names the gateway on create, change and delete', async () => {
    const created = await owner.client.post(`/v1/teams/${team}/gateways`, { slug: unique('gw'), name: 'Gateway' });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    await announced(id);

    seen.length = 0;
    const changed = await owner.client.patch(`/v1/teams/${team}/gateways/${id}`, { enabled: false }, { 'if-match': '"1"' });
    expect(changed.status).toBe(200);
    await announced(id);

    seen.length = 0;
    expect((await owner.client.delete(`/v1/teams/${team}/gateways/${id}`)).status).toBe(204);
    await announced(id);
  });

  it('sends nothing for a refused change', async () => {
    const created = await owner.client.post(`/v1/teams/${team}/gateways`, { slug: unique('gw'), name: 'Gateway' });
    const id = created.body.data.id as string;
    await announced(id);
    seen.length = 0;
    expect((await owner.client.patch(`/v1/teams/${team}/gateways/${id}`, { name: 'Stale' }, { 'if-match': '"7"' })).status).toBe(412);
    // A later accepted change's signal arrives after any signal of the refused one would have (one channel, in order).
    const accepted = await owner.client.patch(`/v1/teams/${team}/gateways/${id}`, { name: 'Fresh' }, { 'if-match': '"1"' });
    expect(accepted.status).toBe(200);
    await announced(id);
    expect(seen.filter((ids) => ids.includes(id))).toHaveLength(1);
  });
});
