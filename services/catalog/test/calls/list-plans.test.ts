import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { createLogger, createPostgresDatabase, migrateService, type Database, type Queryable } from '@platform/runtime';
import { createTestDatabase, describeWith, infraUrl } from '@platform/test';
import { deleteExpiredCallRecords, listCallRecords, type CallFilter } from '../../src/store/calls-store';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Parent Relationship'?: string;
  Plans?: PlanNode[];
}

const PAGE = 50;
const DAY_MS = 86_400_000;
const logger = createLogger({ level: 'silent' });

/**
 * The call list reads about a page of records, whatever the page, for each filter alone, a time window far back, the
 * common combinations and a team whose calls stopped weeks ago (docs/catalog.md, Call records; measured at 2 M records
 * in docs/performance.md): never every record of the team, or of the table, to sort them. And retention reads only
 * expired records. A scratch database with the catalog's migrations holds 80,000 records written directly (the list
 * is what is looked at), and the store's own statements run under EXPLAIN ANALYZE.
 */
describeWith('postgres', 'call list plans at scale', () => {
  let scratch: { url: string; drop(): Promise<void> };
  let db: Database;
  const team = randomUUID();
  const quietTeam = randomUUID();
  const gateways = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  const servers = Array.from({ length: 10 }, () => randomUUID());
  const people = Array.from({ length: 20 }, () => randomUUID());
  const end = Date.now();
  const ago = (days: number) => new Date(end - days * DAY_MS).toISOString();

  beforeAll(async () => {
    scratch = await createTestDatabase(infraUrl('postgres')!);
    db = createPostgresDatabase({ url: scratch.url, poolMax: 2, logger });
    await migrateService(db, { schema: 'catalog', dir: path.join(__dirname, '../../src/store/migrations'), logger });
    // Over 31 days in time order (ids rise with the time): the team 60 % of the records, a team that stopped calling
    // 15 days ago 5 %, 20 others the rest. The team's calls go through 4 gateways to 10 servers, by 20 people; 5 % are
    // prompts/get, 10 % tools/list (which reaches no server), 5 % errors and 1 % timeouts.
    await db.transaction(async (tx) => {
      await tx.query('SELECT setseed(0.25)');
      await tx.query(
        `INSERT INTO catalog.call_records (event_id, team_id, occurred_at, method, gateway_id, gateway_slug, gateway_name, server_id,
                                           principal, principal_user_id, outcome, latency_ms, request_bytes, response_bytes)
         SELECT gen_random_uuid(), r.team_id, $1::timestamptz - make_interval(secs => (80000 - r.n) * 31 * 86400.0 / 80000), r.method,
                CASE WHEN r.team_id = $2::uuid THEN ($4::uuid[])[1 + floor(random() * 4)::int] ELSE gen_random_uuid() END, 'gw', 'Gateway',
                CASE WHEN r.method = 'tools/list' THEN NULL WHEN r.team_id = $2::uuid THEN ($5::uuid[])[1 + floor(random() * 10)::int]
                     ELSE gen_random_uuid() END,
                '{"kind": "user"}', CASE WHEN r.team_id = $2::uuid THEN ($6::uuid[])[1 + floor(random() * 20)::int] ELSE gen_random_uuid() END,
                r.outcome, 10, 100, 100
           FROM (SELECT n,
                        CASE WHEN share < 0.60 OR (share < 0.65 AND n > 40000) THEN $2::uuid WHEN share < 0.65 THEN $3::uuid
                             ELSE ('00000000-0000-4000-8000-0000000000' || lpad((n % 20)::text, 2, '0'))::uuid END AS team_id,
                        CASE WHEN m < 0.05 THEN 'prompts/get' WHEN m < 0.15 THEN 'tools/list' ELSE 'tools/call' END AS method,
                        CASE WHEN o < 0.05 THEN 'error' WHEN o < 0.06 THEN 'timeout' ELSE 'ok' END AS outcome
                   FROM (SELECT n, random() AS share, random() AS m, random() AS o FROM generate_series(1, 80000) n) raw) r
          ORDER BY r.n`,
        [new Date(end).toISOString(), team, quietTeam, gateways, servers, people],
      );
    });
    await db.query('ANALYZE catalog.call_records');
  }, 120_000);
  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  /** The plan of the store's own statement, as PostgreSQL ran it. */
  async function planOf(run: (explaining: Queryable) => Promise<unknown>, on: Queryable = db): Promise<PlanNode> {
    let plan: PlanNode | undefined;
    const explaining: Queryable = {
      query: (async (sql: string, params?: readonly unknown[]) => {
        const { rows } = await on.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
        plan = rows[0]!['QUERY PLAN'][0]!.Plan;
        return { rows: [], rowCount: 0 };
      }) as Queryable['query'],
    };
    await run(explaining);
    return plan!;
  }
  // The exists flags' lookups of gateways and servers (SubPlans) are left out: a page's rows, the same for any list.
  const nodesOf = (node: PlanNode): PlanNode[] =>
    node['Parent Relationship'] === 'SubPlan' ? [] : [node, ...(node.Plans ?? []).flatMap(nodesOf)];
  /**
   * How the plan reached call_records, and how many of the table's rows it read (kept or thrown away by a filter).
   * Index entries a condition refuses inside the index are not counted: that is what the errors index's trailing
   * columns are for ("another team's gateway, errors" walks the team's errors in the index, reading no row).
   */
  const accessOf = (plan: PlanNode) => {
    const nodes = nodesOf(plan);
    const scans = nodes.filter((node) => node['Relation Name'] === 'call_records');
    return {
      scans: scans.map((node) => node['Node Type']),
      sorted: nodes.some((node) => node['Node Type'].includes('Sort')),
      rowsRead: scans.reduce((sum, node) => sum + (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0)) * node['Actual Loops'], 0),
    };
  };

  /** The cursor's position of the page that starts `offset` records into the list; null when the list is shorter. */
  async function positionAt(teamId: string, filter: Omit<CallFilter, 'teamId' | 'limit'>, offset: number) {
    const page = await listCallRecords(db, { ...filter, teamId, limit: offset });
    const last = page[offset - 1];
    return last ? { position: last.position, id: last.id } : null;
  }

  const cases: [string, Omit<CallFilter, 'teamId' | 'limit'>, string?][] = [
    ['no filter', {}],
    ['a gateway', { gatewayId: gateways[0]! }],
    ['a server', { serverId: servers[0]! }],
    ['a person', { userId: people[0]! }],
    ['errors', { outcome: 'error' }],
    ['a rare method', { method: 'prompts/get' }],
    ['a method no record has', { method: 'tools/calls' }],
    ['a day ten days back', { since: ago(11), until: ago(10) }],
    ['until 20 days ago', { until: ago(20) }],
    ['a gateway\'s errors', { gatewayId: gateways[0]!, outcome: 'error' }],
    ['another team\'s gateway, errors', { gatewayId: randomUUID(), outcome: 'error' }],
    ['a server, a day ten days back', { serverId: servers[0]!, since: ago(11), until: ago(10) }],
    ['a team that stopped calling 15 days ago', {}, quietTeam],
  ];

  it.each(cases)('%s: a page, and a later page by cursor, read about a page of rows through an index', async (_name, filter, teamId = team) => {
    for (const offset of [0, 200]) {
      const after = offset === 0 ? undefined : await positionAt(teamId, filter, offset);
      // A filter with fewer matches than the offset has no later page.
      if (after === null) continue;
      const access = accessOf(await planOf((q) => listCallRecords(q, { ...filter, teamId, limit: PAGE + 1, ...(after ? { after } : {}) })));
      expect({ offset, ...access, rowsRead: access.rowsRead <= 2 * (PAGE + 1) }).toEqual({ offset, scans: ['Index Scan'], sorted: false, rowsRead: true });
    }
  });

  it('deletes expired records reading only those', async () => {
    // Rolled back: the plan of one chunk is what is looked at.
    await db
      .transaction(async (tx) => {
        const access = accessOf(await planOf((q) => deleteExpiredCallRecords(q, 30, 500), tx));
        expect(access.scans).not.toContain('Seq Scan');
        expect(access.rowsRead).toBeLessThanOrEqual(2 * 500 + 500);
        throw new Error('roll back');
      })
      .catch((error: Error) => expect(error.message).toBe('roll back'));
  });
});
