import type { Client } from 'pg';
import { adminClient, databaseOf, newPerson, newTeam, startTestPlatform, unique, type TestPerson, type TestPlatform } from '@platform/test';
import { MAX_GONE_UNAPPROVED_PER_SERVER } from '../../src/domain/capabilities';
import { startUpstream, type Upstream } from './upstream';

/** Tools named for one round of an upstream that renames all of them at each refresh. */
const round = (n: number, count: number) => Array.from({ length: count }, (_, i) => ({ name: `r${n}_tool${i}`, description: 'A tool' }));

/**
 * Gone capabilities are kept (an approval survives a flapping upstream), but those never approved only up to
 * MAX_GONE_UNAPPROVED_PER_SERVER per server, the most recently gone: an upstream renaming its tools at every refresh
 * must not grow the catalog without end.
 */
describe('the bound on a server\'s gone capabilities', () => {
  let platform: TestPlatform;
  let upstream: Upstream;
  let owner: TestPerson;
  let team: string;
  let db: Client;

  beforeAll(async () => {
    platform = await startTestPlatform({
      env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_HEALTH_CHECK_SECONDS: '0', MCP_REFRESH_SECONDS: '0', MCP_PUBLISH_POLICY: 'self_publish' },
    });
    db = await databaseOf(platform, { required: true });
    upstream = await startUpstream('X-Upstream-Key');
    const admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await platform?.stop();
    await upstream?.close();
  });

  const toolsOf = async (serverId: string) =>
    (
      await db.query<{ name: string; gone: boolean; approved: boolean }>(
        `SELECT name, gone_at IS NOT NULL AS gone, approved_fingerprint IS NOT NULL AS approved
           FROM catalog.capabilities WHERE server_id = $1 AND kind = 'tool'`,
        [serverId],
      )
    ).rows;

  it('deletes the oldest gone capabilities never approved beyond the bound, and keeps every approved one', async () => {
    const perRound = Math.ceil((MAX_GONE_UNAPPROVED_PER_SERVER * 3) / 5);
    upstream.state.tools = [{ name: 'keeper', description: 'Approved, then gone' }];
    const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: 'Renamer', slug: unique('renamer'), url: upstream.url, timeoutSeconds: 30 });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    const refresh = async () => expect((await owner.client.post(`/v1/teams/${team}/mcp-servers/${id}/refresh`)).status).toBe(200);
    await refresh();
    // Publishing under self_publish approves what is present: the keeper.
    expect((await owner.client.post(`/v1/teams/${team}/mcp-servers/${id}/publish`, {})).status).toBe(200);

    for (let n = 1; n <= 3; n++) {
      upstream.state.tools = round(n, perRound);
      await refresh();
    }
    const stored = await toolsOf(id);
    const goneUnapproved = stored.filter((tool) => tool.gone && !tool.approved);
    // Rounds 1 and 2 are gone (2 × perRound, over the bound): the bound's worth stays, round 2 (gone last) whole.
    expect(goneUnapproved).toHaveLength(MAX_GONE_UNAPPROVED_PER_SERVER);
    expect(goneUnapproved.filter((tool) => tool.name.startsWith('r2_'))).toHaveLength(perRound);
    expect(goneUnapproved.filter((tool) => tool.name.startsWith('r1_'))).toHaveLength(MAX_GONE_UNAPPROVED_PER_SERVER - perRound);
    expect(stored.filter((tool) => !tool.gone).map((tool) => tool.name).sort()).toEqual(round(3, perRound).map((tool) => tool.name).sort());
    // The approved keeper stays, gone, whatever the count.
    expect(stored.filter((tool) => tool.name === 'keeper')).toEqual([{ name: 'keeper', gone: true, approved: true }]);

    // A deleted one that comes back is simply new: present and unapproved.
    const kept = new Set(stored.map((tool) => tool.name));
    const deleted = round(1, perRound).find((tool) => !kept.has(tool.name))!;
    upstream.state.tools = [...round(3, perRound), deleted];
    await refresh();
    expect((await toolsOf(id)).filter((tool) => tool.name === deleted.name)).toEqual([{ name: deleted.name, gone: false, approved: false }]);
  }, 120_000);
});
