import { MAX_GONE_UNAPPROVED_PER_SERVER } from '../../src/domain/capabilities';
import { capabilityTestbed } from './testbed';
import { startUpstream, type Upstream } from './upstream';

/** Tools named for one round of an upstream that renames all of them at each refresh. */
const round = (n: number, count: number) => Array.from({ length: count }, (_, i) => ({ name: `r${n}_tool${i}`, description: 'A tool' }));

/**
 * Gone capabilities are kept (an approval survives a flapping upstream), but those never approved only up to
 * MAX_GONE_UNAPPROVED_PER_SERVER per server, the most recently gone: an upstream renaming its tools at every refresh
 * must not grow the catalog without end.
 */
describe('the bound on a server\'s gone capabilities', () => {
  const testbed = capabilityTestbed({ MCP_PUBLISH_POLICY: 'self_publish' });
  let upstream: Upstream;
  beforeAll(async () => {
    upstream = await startUpstream('X-Upstream-Key');
  });
  afterAll(() => upstream?.close());

  const toolsOf = async (serverId: string) =>
    (
      await testbed().db.query<{ name: string; gone: boolean; approved: boolean }>(
        `SELECT name, gone_at IS NOT NULL AS gone, approved_fingerprint IS NOT NULL AS approved
           FROM catalog.capabilities WHERE server_id = $1 AND kind = 'tool'`,
        [serverId],
      )
    ).rows;

  it('deletes the oldest gone capabilities never approved beyond the bound, and keeps every approved one', async () => {
    const perRound = Math.ceil((MAX_GONE_UNAPPROVED_PER_SERVER * 3) / 5);
    const { owner, team } = testbed();
    upstream.state.tools = [{ name: 'keeper', description: 'Approved, then gone' }];
    const id = await testbed().register('renamer', upstream.url);
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
