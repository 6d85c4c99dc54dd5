import { adminClient, answer, eventually, initializeResult, newPerson, newTeam, startRawUpstream, startTestPlatform, unique, type RawUpstream, type TestPerson, type TestPlatform } from '@platform/test';
import { MAX_HANDSHAKE_BYTES } from '../../src/domain/upstream-fetch';
import { startEndpointlessSseUpstream, startTricklingUpstream } from '../capabilities/raw-upstream';
import { startControllableUpstream, type ControllableUpstream } from './controllable-upstream';

/**
 * A health check ends within the server's timeout whatever the upstream does, even when it holds a step of the SDK
 * client's `connect` that no request timeout covers: a round of checks waits for all of its checks, so one that
 * never ended stopped the replica's checker for good. And it reads at most MAX_HANDSHAKE_BYTES (docs/catalog.md,
 * Health checks and scheduled discovery).
 */
describe('health checks bounded whatever the upstream does', () => {
  let platform: TestPlatform;
  let owner: TestPerson;
  let team: string;
  const upstreams: (RawUpstream | ControllableUpstream)[] = [];

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_HEALTH_CHECK_SECONDS: '1' } });
    const admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
    await Promise.allSettled(upstreams.map((upstream) => upstream.close()));
  });

  async function register(url: string, transport = 'streamable-http'): Promise<string> {
    const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: 'Checked', slug: unique('held'), url, transport, timeoutSeconds: 2 });
    expect(created.status).toBe(201);
    return created.body.data.id;
  }

  const healthOf = async (serverId: string) => (await owner.client.get(`/v1/teams/${team}/mcp-servers/${serverId}`)).body.data.health;

  it('marks both unhealthy as timeouts, and the checker goes on checking the other servers', async () => {
    const trickling = await startTricklingUpstream();
    const endpointless = await startEndpointlessSseUpstream();
    const live = await startControllableUpstream();
    upstreams.push(trickling, endpointless, live);
    const liveId = await register(live.url);
    const heldIds = [await register(trickling.url), await register(endpointless.url, 'sse')];

    await eventually(() => healthOf(liveId), (value) => value.status === 'healthy');
    for (const id of heldIds) {
      const health = await eventually(() => healthOf(id), (value) => value.status === 'unhealthy');
      expect(health).toMatchObject({ errorClass: 'timeout', message: 'The MCP server could not be reached: timeout', latencyMs: null });
    }

    // Rounds go on after the held checks ended: the live server is checked again, twice, and the held ones again too.
    const checkedAt = async (id: string) => Date.parse((await healthOf(id)).checkedAt);
    const since = Math.max(...(await Promise.all([liveId, ...heldIds].map(checkedAt))));
    for (let round = 0; round < 2; round++) {
      const before = round === 0 ? since : await checkedAt(liveId);
      await eventually(() => checkedAt(liveId), (value) => value > before);
    }
    expect(await healthOf(liveId)).toMatchObject({ status: 'healthy' });
    for (const id of heldIds) await eventually(() => checkedAt(id), (value) => value > since);
  }, 90_000);

  it('reads at most 1 MiB of an upstream: a larger initialize answer is a protocol_error', async () => {
    const instructions = 'x'.repeat(MAX_HANDSHAKE_BYTES);
    const verbose = await startRawUpstream((message, res) => {
      if (message?.method !== 'initialize') return false;
      answer(res, message.id, { ...initializeResult(), instructions });
      return true;
    });
    upstreams.push(verbose);
    const id = await register(verbose.url);
    const health = await eventually(() => healthOf(id), (value) => value.status === 'unhealthy');
    expect(health).toMatchObject({ errorClass: 'protocol_error', message: 'The MCP server could not be reached: protocol_error' });
  }, 60_000);
});
