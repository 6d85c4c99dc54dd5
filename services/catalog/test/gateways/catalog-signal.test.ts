import { createCache, onCatalogChange, type Cache } from '@platform/runtime';
import { adminClient, eventually, newPerson, newTeam, startTestPlatform, unique, type ApiClient, type TestPerson, type TestPlatform } from '@platform/test';
import { publish, refreshServer, registerServer } from './catalog-setup';
import { startUpstream, type Upstream } from './upstream';

/**
 * Gateway changes tell every edge, through the cache's pub/sub, which gateway's resolved configuration to drop;
 * capability changes found by a refresh tell them to drop every gateway's. Listened to from outside the platform, as
 * another replica's edge would, so this needs Redis.
 */
describe('catalog change signal of gateway and capability changes', () => {
  let platform: TestPlatform;
  let signals: Cache;
  let admin: ApiClient;
  let owner: TestPerson;
  let upstream: Upstream;
  let team: string;
  const seen: string[][] = [];
  let unsubscribe: () => Promise<void>;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' } });
    const { config, logger } = platform.platform.context;
    if (config.cache.kind !== 'redis') throw new Error('this test needs Redis (source ~/.cache/mcp-platform/test.env)');
    signals = createCache(config.cache, logger);
    unsubscribe = await onCatalogChange(signals, (ids) => seen.push(ids));
    admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    upstream = await startUpstream({ tools: { search: 'Search', fetch: 'Fetch' } });
    team = await newTeam(admin, owner);
  }, 120_000);
  afterAll(async () => {
    await unsubscribe?.();
    await signals?.close();
    await platform?.stop();
    await upstream?.close();
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

  /**
   * Every announcement made before this one has been received once its own has (one channel, in order): creates a
   * gateway, waits for the signal naming it and forgets what was seen up to there.
   */
  async function fence(): Promise<void> {
    const created = await owner.client.post(`/v1/teams/${team}/gateways`, { slug: unique('fence'), name: 'Fence' });
    expect(created.status).toBe(201);
    await announced(created.body.data.id as string);
    seen.length = 0;
  }

  it('tells every gateway when an approved capability that was gone comes back unchanged', async () => {
    const server = await registerServer(owner, team, upstream);
    await publish(owner, admin, team, server.id);
    upstream.offer.tools = { search: 'Search' };
    await refreshServer(owner, team, server.id);

    await fence();
    // `fetch` returns as it was approved: gateways expose it again, so edges must drop what they resolved.
    upstream.offer.tools = { search: 'Search', fetch: 'Fetch' };
    await refreshServer(owner, team, server.id);
    const listed = await owner.client.get(`/v1/teams/${team}/mcp-servers/${server.id}/capabilities`);
    expect(listed.body.data.find((item: { name: string }) => item.name === 'fetch')).toMatchObject({ approved: true, goneAt: null });
    const marker = await owner.client.post(`/v1/teams/${team}/gateways`, { slug: unique('marker'), name: 'Marker' });
    await announced(marker.body.data.id as string);
    // Before the marker's own signal: one for any gateway (an empty list), the refresh's.
    expect(seen.slice(0, seen.findIndex((ids) => ids.includes(marker.body.data.id as string)))).toEqual([[]]);

    // An unchanged refresh announces nothing.
    await fence();
    await refreshServer(owner, team, server.id);
    const after = await owner.client.post(`/v1/teams/${team}/gateways`, { slug: unique('marker'), name: 'Marker' });
    await announced(after.body.data.id as string);
    expect(seen).toEqual([[after.body.data.id as string]]);
  });
});
