import type { Client } from 'pg';
import type { Queryable } from '@platform/runtime';
import type { TestPerson } from '@platform/test';
import { listCapabilityPage, type CapabilityPosition } from '../../src/store/capabilities-store';
import { capabilityTestbed } from './testbed';
import { startUpstream, type Upstream } from './upstream';

interface CapabilityJson {
  id: string;
  kind: string;
  name: string;
  goneAt: string | null;
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Rows': number;
  Plans?: PlanNode[];
}

const TOOLS = 60;
/** The three capabilities the test upstream offers besides its tools, in list order. */
const OTHERS = ['resource:file:///readme.md', 'resource_template:issues://{id}', 'prompt:summarise'];
/** Tool names whose order is the same in every collation (no case, no punctuation, same length). */
const toolName = (n: number) => `tool${String(n).padStart(2, '0')}`;
const keyOf = (item: CapabilityJson) => `${item.kind}:${item.name}`;
const cursorOf = (position: object) => Buffer.from(JSON.stringify(position)).toString('base64url');

/** The capabilities list in keyset pages (docs/api.md, Pagination), against a real SDK upstream and PostgreSQL. */
describe('paging an MCP server\'s capabilities', () => {
  const testbed = capabilityTestbed();
  let upstream: Upstream;
  let owner: TestPerson;
  let team: string;
  let serverId: string;
  let db: Client;

  const newServer = () => testbed().register('paged', upstream.url, 5);
  beforeAll(async () => {
    ({ owner, team, db } = testbed());
    upstream = await startUpstream('X-Upstream-Key');
    upstream.state.tools = Array.from({ length: TOOLS }, (_, n) => ({ name: toolName(n), description: `Tool ${n}` }));
    serverId = await newServer();
    expect((await owner.client.post(`/v1/teams/${team}/mcp-servers/${serverId}/refresh`)).status).toBe(200);
  });
  afterAll(() => upstream?.close());
  const capabilities = (query: string, id = serverId) => owner.client.get(`/v1/teams/${team}/mcp-servers/${id}/capabilities?${query}`);

  /** Every capability, walking pages of `limit`; checks each page's size on the way. */
  const walk = async (limit: number, includeGone = false): Promise<CapabilityJson[]> => {
    const items: CapabilityJson[] = [];
    let cursor: string | null = null;
    do {
      const page = await capabilities(`limit=${limit}&includeGone=${includeGone}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      const data = page.body.data as CapabilityJson[];
      cursor = page.body.nextCursor as string | null;
      // A full page, except the last one, which is never empty unless the whole list is.
      if (cursor) expect(data).toHaveLength(limit);
      else expect(data.length === 0 ? items.length === 0 : data.length <= limit).toBe(true);
      items.push(...data);
    } while (cursor);
    return items;
  };

  it('walks every capability once, by kind then name, in pages of any size', async () => {
    const expected = [...Array.from({ length: TOOLS }, (_, n) => `tool:${toolName(n)}`), ...OTHERS];
    for (const limit of [1, 7, 50, 62, 63, 200]) {
      const items = await walk(limit);
      expect({ limit, keys: items.map(keyOf) }).toEqual({ limit, keys: expected });
      expect(new Set(items.map((item) => item.id)).size).toBe(expected.length);
    }
  });

  it('pages 50 by default, and keeps limit within 1 to 200', async () => {
    const first = await capabilities('');
    expect([first.status, first.body.data.length, typeof first.body.nextCursor]).toEqual([200, 50, 'string']);
    const rest = await capabilities(`cursor=${first.body.nextCursor}`);
    expect([rest.body.data.length, rest.body.nextCursor]).toEqual([TOOLS + OTHERS.length - 50, null]);
    for (const limit of ['0', '201', '-1', '1.5', 'ten']) {
      const refused = await capabilities(`limit=${limit}`);
      expect({ limit, status: refused.status, code: refused.body.error?.code }).toEqual({ limit, status: 400, code: 'invalid_request' });
      expect(refused.body.error.fields.map((f: { field: string }) => f.field)).toEqual(['limit']);
    }
  });

  it('pages present capabilities only, or gone ones too with includeGone, each once and in order', async () => {
    const pagedId = await newServer();
    upstream.state.tools = Array.from({ length: 30 }, (_, n) => ({ name: toolName(n), description: `Tool ${n}` }));
    try {
      expect((await owner.client.post(`/v1/teams/${team}/mcp-servers/${pagedId}/refresh`)).status).toBe(200);
      // Every third tool goes upstream: gone ones sit between present ones in the list's order.
      upstream.state.tools = upstream.state.tools.filter((_, n) => n % 3 !== 0);
      expect((await owner.client.post(`/v1/teams/${team}/mcp-servers/${pagedId}/refresh`)).status).toBe(200);
    } finally {
      upstream.state.tools = Array.from({ length: TOOLS }, (_, n) => ({ name: toolName(n), description: `Tool ${n}` }));
    }
    const walkServer = async (includeGone: boolean) => {
      const items: CapabilityJson[] = [];
      for (let cursor: string | null = ''; cursor !== null; ) {
        const page = await capabilities(`limit=4&includeGone=${includeGone}${cursor ? `&cursor=${cursor}` : ''}`, pagedId);
        expect(page.status).toBe(200);
        items.push(...(page.body.data as CapabilityJson[]));
        cursor = page.body.nextCursor as string | null;
      }
      return items;
    };
    const all = Array.from({ length: 30 }, (_, n) => toolName(n));
    const present = await walkServer(false);
    expect(present.map(keyOf)).toEqual([...all.filter((_, n) => n % 3 !== 0).map((name) => `tool:${name}`), ...OTHERS]);
    expect(present.every((item) => item.goneAt === null)).toBe(true);
    const withGone = await walkServer(true);
    expect(withGone.map(keyOf)).toEqual([...all.map((name) => `tool:${name}`), ...OTHERS]);
    expect(withGone.filter((item) => item.goneAt !== null).map((item) => item.name)).toEqual(all.filter((_, n) => n % 3 === 0));
  });

  it('answers a refresh with the first page of the present capabilities, which the list continues', async () => {
    const refreshed = await owner.client.post(`/v1/teams/${team}/mcp-servers/${serverId}/refresh?limit=10`);
    expect([refreshed.status, refreshed.body.data.length, typeof refreshed.body.nextCursor]).toEqual([200, 10, 'string']);
    const rest = await walkFrom(refreshed.body.nextCursor as string);
    expect([...refreshed.body.data, ...rest].map(keyOf)).toEqual((await walk(200)).map(keyOf));
    const byDefault = await owner.client.post(`/v1/teams/${team}/mcp-servers/${serverId}/refresh`);
    expect([byDefault.body.data.length, typeof byDefault.body.nextCursor]).toEqual([50, 'string']);
    expect((await owner.client.post(`/v1/teams/${team}/mcp-servers/${serverId}/refresh?limit=201`)).status).toBe(400);
  });

  const walkFrom = async (start: string): Promise<CapabilityJson[]> => {
    const items: CapabilityJson[] = [];
    for (let cursor: string | null = start; cursor !== null; ) {
      const page = await capabilities(`limit=20&cursor=${cursor}`);
      expect(page.status).toBe(200);
      items.push(...(page.body.data as CapabilityJson[]));
      cursor = page.body.nextCursor as string | null;
    }
    return items;
  };

  it('refuses a cursor it did not make for this list with 400 naming cursor', async () => {
    const otherId = await newServer();
    expect((await owner.client.post(`/v1/teams/${team}/mcp-servers/${otherId}/refresh`)).status).toBe(200);
    const otherCursor = (await capabilities('limit=1', otherId)).body.nextCursor as string;
    const ownCursor = (await capabilities('limit=1')).body.nextCursor as string;
    for (const cursor of [
      'not-a-cursor!',
      'bm90LWEtY3Vyc29y',
      cursorOf({ slug: 'tools' }),
      cursorOf({ id: 'not-a-uuid' }),
      cursorOf({ id: '00000000-0000-4000-8000-000000000000' }),
      // Another server's capability is no position in this list.
      otherCursor,
      `${ownCursor.slice(0, -2)}xx`,
    ]) {
      const refused = await capabilities(`cursor=${encodeURIComponent(cursor)}`);
      expect({ cursor, status: refused.status, code: refused.body.error?.code }).toEqual({ cursor, status: 400, code: 'invalid_request' });
      expect(refused.body.error.fields.map((f: { field: string }) => f.field)).toEqual(['cursor']);
    }
  });

  describe('on a server with many capabilities', () => {
    let manyId: string;

    beforeAll(async () => {
      manyId = await newServer();
      // 20,000 rows, a third of them gone, every kind among them: written directly, discovery is not what is measured.
      await db.query(
        `INSERT INTO catalog.capabilities (id, server_id, kind, name, definition, fingerprint, gone_at)
         SELECT gen_random_uuid(), $1, (ARRAY['tool', 'resource', 'resource_template', 'prompt'])[1 + i % 4],
                'cap' || lpad(i::text, 6, '0'), '{}'::jsonb, 'f', CASE WHEN i % 3 = 0 THEN now() END
           FROM generate_series(1, 20000) AS i`,
        [manyId],
      );
      await db.query('ANALYZE catalog.capabilities');
    });

    /** The plan of the store's own page statement as PostgreSQL ran it. */
    const planOf = async (options: { includeGone: boolean; after: CapabilityPosition | null; limit: number }): Promise<PlanNode> => {
      let plan: PlanNode | undefined;
      const explaining: Queryable = {
        query: (async (sql: string, params?: readonly unknown[]) => {
          const { rows } = await db.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params as unknown[]);
          plan = rows[0]!['QUERY PLAN'][0]!.Plan;
          return { rows: [], rowCount: 0 };
        }) as Queryable['query'],
      };
      await listCapabilityPage(explaining, manyId, options);
      return plan!;
    };
    const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];
    const middle = async (): Promise<CapabilityPosition> =>
      (await db.query<CapabilityPosition>(`SELECT id, kind, name FROM catalog.capabilities WHERE server_id = $1 AND name = 'cap010001'`, [manyId])).rows[0]!;

    it('reads about a page through an index, whatever the page, with or without gone ones', async () => {
      for (const [includeGone, index] of [
        [false, 'capabilities_server_list_order_present'],
        [true, 'capabilities_server_list_order'],
      ] as const) {
        for (const after of [null, await middle()]) {
          const nodes = nodesOf(await planOf({ includeGone, after, limit: 50 }));
          const scan = nodes.find((node) => node['Index Name'] !== undefined);
          const label = `includeGone ${includeGone}, ${after ? 'after the middle' : 'first page'}`;
          expect({ label, index: scan?.['Index Name'], sorted: nodes.some((node) => node['Node Type'].includes('Sort')) }).toEqual({ label, index, sorted: false });
          expect(scan!['Actual Rows']).toBe(51);
        }
      }
    });
  });
});
