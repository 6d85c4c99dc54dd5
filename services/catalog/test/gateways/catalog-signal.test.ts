import { createCache, MAX_GATEWAYS_PER_MESSAGE, onCatalogChange, type Cache } from '@platform/runtime';
import { adminClient, eventually, newPerson, newTeam, startTestPlatform, unique, type ApiClient, type TestPerson, type TestPlatform } from '@platform/test';
import { publish, refreshServer, registerServer } from './catalog-setup';
import { startUpstream, type Upstream } from './upstream';

/**
 * Gateway changes tell every edge, through the cache's pub/sub, which gateway's resolved configuration to drop;
 * capability changes found by a refresh name the gateways that name the server, when they can change what it exposes.
 * Listened to from outside the platform, as another replica's edge would, so this needs Redis.
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

  /** A gateway of the team naming the given servers; returns its id once its own announcement was heard. */
  async function gatewayWith(...serverIds: string[]): Promise<string> {
    const created = await owner.client.post(`/v1/teams/${team}/gateways`, { slug: unique('gw'), name: 'Gateway', servers: serverIds.map((serverId) => ({ serverId })) });
    expect(created.status).toBe(201);
    await announced(created.body.data.id as string);
    return created.body.data.id as string;
  }

  /** What was announced from the last fence until now: a marker gateway is created, and what came before its own signal answered. */
  async function announcedSinceFence(): Promise<string[][]> {
    const marker = await owner.client.post(`/v1/teams/${team}/gateways`, { slug: unique('marker'), name: 'Marker' });
    const markerId = marker.body.data.id as string;
    await announced(markerId);
    return seen.slice(0, seen.findIndex((ids) => ids.includes(markerId)));
  }

  it('tells the gateways naming the server when an approved capability that was gone comes back unchanged', async () => {
    const server = await registerServer(owner, team, upstream);
    await publish(owner, admin, team, server.id);
    const gateway = await gatewayWith(server.id);
    const unrelated = await gatewayWith();
    upstream.offer.tools = { search: 'Search' };
    await refreshServer(owner, team, server.id);

    await fence();
    // `fetch` returns as it was approved: the gateway exposes it again, so edges must drop what they resolved of it.
    upstream.offer.tools = { search: 'Search', fetch: 'Fetch' };
    await refreshServer(owner, team, server.id);
    const listed = await owner.client.get(`/v1/teams/${team}/mcp-servers/${server.id}/capabilities`);
    expect(listed.body.data.find((item: { name: string }) => item.name === 'fetch')).toMatchObject({ approved: true, goneAt: null });
    // Its gateway alone: neither every gateway (an empty list) nor the unrelated one.
    const heard = await announcedSinceFence();
    expect(heard).toEqual([[gateway]]);
    expect(heard.flat()).not.toContain(unrelated);

    // An unchanged refresh announces nothing.
    await fence();
    await refreshServer(owner, team, server.id);
    expect(await announcedSinceFence()).toEqual([]);
  });

  it('names the gateways of a published server when its team or a platform admin changes it, never every gateway', async () => {
    const changing = await startUpstream({ tools: { search: 'Search' } });
    try {
      const server = await registerServer(owner, team, changing);
      await publish(owner, admin, team, server.id);
      const gateway = await gatewayWith(server.id);
      const unrelated = await gatewayWith();

      await fence();
      const current = (await owner.client.get(`/v1/teams/${team}/mcp-servers/${server.id}`)).body.data as { revision: number };
      const patched = await owner.client.patch(`/v1/teams/${team}/mcp-servers/${server.id}`, { description: 'Changed' }, { 'if-match': `"${current.revision}"` });
      expect(patched.status).toBe(200);
      expect(await announcedSinceFence()).toEqual([[gateway]]);

      await fence();
      const adminView = (await admin.get(`/v1/admin/mcp-servers/${server.id}`)).body.data as { revision: number };
      const disabled = await admin.patch(`/v1/admin/mcp-servers/${server.id}`, { enabled: false }, { 'if-match': `"${adminView.revision}"` });
      expect(disabled.status).toBe(200);
      const heard = await announcedSinceFence();
      expect(heard).toEqual([[gateway]]);
      expect(heard.flat()).not.toContain(unrelated);
    } finally {
      await changing.close();
    }
  });

  it('announces nothing for changes to a server in no gateway', async () => {
    const alone = await startUpstream({ tools: { search: 'Search', fetch: 'Fetch' } });
    try {
      const server = await registerServer(owner, team, alone);
      await publish(owner, admin, team, server.id);
      await fence();
      // Approved capabilities redefined and gone, a new one: exposed by no gateway, so nothing to tell.
      alone.offer.tools = { search: 'Search, changed', other: 'Other' };
      await refreshServer(owner, team, server.id);
      expect(await announcedSinceFence()).toEqual([]);

      await fence();
      expect((await owner.client.delete(`/v1/teams/${team}/mcp-servers/${server.id}`)).status).toBe(204);
      expect(await announcedSinceFence()).toEqual([]);
    } finally {
      await alone.close();
    }
  });

  it('announces changes that can change what the gateway exposes, and not those to unapproved capabilities', async () => {
    const changing = await startUpstream({ tools: { search: 'Search' } });
    try {
      const server = await registerServer(owner, team, changing);
      await publish(owner, admin, team, server.id);
      const gateway = await gatewayWith(server.id);

      // New, redefined while unapproved, gone while unapproved: hidden throughout.
      await fence();
      for (const tools of [{ search: 'Search', draft: 'Draft' }, { search: 'Search', draft: 'Draft, changed' }, { search: 'Search' }] as Record<string, string>[]) {
        changing.offer.tools = tools;
        await refreshServer(owner, team, server.id);
      }
      expect(await announcedSinceFence()).toEqual([]);

      // The approved one redefined (hidden), redefined back as approved (exposed again), then gone: each announced.
      for (const tools of [{ search: 'Search, changed' }, { search: 'Search' }, {}] as Record<string, string>[]) {
        await fence();
        changing.offer.tools = tools;
        await refreshServer(owner, team, server.id);
        expect(await announcedSinceFence()).toEqual([[gateway]]);
      }
    } finally {
      await changing.close();
    }
  });

  it(`names every gateway of a server in more than ${MAX_GATEWAYS_PER_MESSAGE} gateways, in several messages, on refresh and delete, and never tells every gateway`, async () => {
    const popular = await startUpstream({ tools: { search: 'Search' } });
    try {
      const server = await registerServer(owner, team, popular);
      await publish(owner, admin, team, server.id);
      // One team's gateways naming its own server: many of them must not make every edge drop every gateway.
      const gateways: string[] = [];
      for (let i = 0; i <= MAX_GATEWAYS_PER_MESSAGE; i++) gateways.push(await gatewayWith(server.id));

      for (const tools of [{ search: 'Search, changed' }, { search: 'Search' }] as Record<string, string>[]) {
        await fence();
        popular.offer.tools = tools;
        await refreshServer(owner, team, server.id);
        const named = await announcedSinceFence();
        expect(named.length).toBeGreaterThan(1);
        // An empty list is "every gateway" (it moves the global generation): none, and no message past the bound.
        for (const ids of named) expect(ids.length).toBeGreaterThan(0);
        for (const ids of named) expect(ids.length).toBeLessThanOrEqual(MAX_GATEWAYS_PER_MESSAGE);
        expect(named.flat().sort()).toEqual([...gateways].sort());
      }

      // Deleted: the same gateways, read by the delete (their rows go with the server), and neither every gateway
      // nor one that never named it.
      const unrelated = await gatewayWith();
      await fence();
      expect((await owner.client.delete(`/v1/teams/${team}/mcp-servers/${server.id}`)).status).toBe(204);
      const named = await announcedSinceFence();
      for (const ids of named) expect(ids.length).toBeGreaterThan(0);
      for (const ids of named) expect(ids.length).toBeLessThanOrEqual(MAX_GATEWAYS_PER_MESSAGE);
      expect(named.flat().sort()).toEqual([...gateways].sort());
      expect(named.flat()).not.toContain(unrelated);
    } finally {
      await popular.close();
    }
  }, 180_000);
});
