import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { catalogService } from '@platform/catalog';
import {
  deleteExpiredCallRecords,
  insertCallRecords,
  listCallRecords,
  findCallRecord,
  type CallFilter,
  type NewCall,
  type NewCallContext,
} from '@platform/catalog/src/store/calls-store';
import { createLogger, createPostgresDatabase, migrate, serviceMigrations, type Database, type Queryable } from '@platform/runtime';
import { infraUrl } from '../src/infra';
import { QUIET_DAYS, seedCallRecords, seeded } from './call-list-seed';
import { cpuTimes } from './process-cpu';

/**
 * The call records list at scale (docs/performance.md, "Call records list at 2 M rows"): seeds call records into a
 * database of its own (`bench_call_list`) on TEST_POSTGRES_URL, with the catalog's real migrations, then runs the
 * store's own statements under EXPLAIN (ANALYZE, BUFFERS): the list for each filter
 * alone and the common combinations, its first page and a later one (by cursor), the single call, a 500-record batch
 * insert, and the retention's chunked deletion. Run: `npm run bench -- call-list`.
 *
 * BENCH_STEPS picks steps (default `list,insert,retention`; retention deletes the expired day for good).
 * BENCH_KEEP_DB=1 keeps the database (and reuses a finished seed on the next run: migrations added since are applied
 * and timed, which measures a new index's build at this size); drop it with `DROP DATABASE bench_call_list`.
 * BENCH_CATALOG_MIGRATIONS=<id> applies the catalog's migrations up to that one only: with
 * `0014_gateway_servers_by_server` it measures the schema and the list statement from before migration 0015 (the
 * "before" columns of docs/performance.md, run with BENCH_KEEP_DB=1); a second run on the kept database without it
 * applies 0015 and gives the "after" ones on the same records. BENCH_CALL_ROWS sets the records (default 2,000,000; a seed takes about 3 minutes on a 2-core VM).
 */
const DATABASE = 'bench_call_list';
const ROWS = Number(process.env.BENCH_CALL_ROWS ?? 2_000_000);
const KEEP = process.env.BENCH_KEEP_DB === '1';
const PAGE = 50;
/** The later page: the one after this many records (page 201 of 50), or the middle of fewer matches. */
const DEEP_OFFSET = 10_000;
const RUNS = 5;
const STEPS = (process.env.BENCH_STEPS ?? 'list,insert,retention').split(',');
const LAST_MIGRATION = process.env.BENCH_CATALOG_MIGRATIONS;
const BATCHES = 100;
const logger = createLogger({ level: 'warn' });

type Filter = Omit<CallFilter, 'teamId' | 'limit' | 'after'>;
interface Case {
  name: string;
  teamId: string;
  filter: Filter;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  'Parent Relationship'?: string;
  Plans?: PlanNode[];
}
interface Explained {
  Plan: PlanNode;
  'Execution Time': number;
}

/** The same conditions as the store's list, for counting a case's matches and finding its later page. */
function whereOf(teamId: string, filter: Filter): { sql: string; params: unknown[] } {
  const params: unknown[] = [teamId];
  const where = ['team_id = $1'];
  const add = (column: string, operator: string, value: unknown) => {
    if (value === undefined) return;
    params.push(value);
    where.push(`${column} ${operator} $${params.length}`);
  };
  add('gateway_id', '=', filter.gatewayId);
  add('server_id', '=', filter.serverId);
  add('outcome', '=', filter.outcome);
  add('method', '=', filter.method);
  add('principal_user_id', '=', filter.userId);
  add('occurred_at', '>=', filter.since);
  add('occurred_at', '<=', filter.until);
  return { sql: where.join(' AND '), params };
}

/** A Queryable that runs each statement under EXPLAIN (ANALYZE, BUFFERS) and keeps the plan instead of the rows. */
function explaining(db: Queryable): { db: Queryable; plan: () => Explained } {
  let last: Explained | undefined;
  return {
    db: {
      query: async <Row>(sql: string, params?: readonly unknown[]) => {
        const { rows } = await db.query<{ 'QUERY PLAN': Explained[] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params);
        last = rows[0]!['QUERY PLAN'][0]!;
        return { rows: [] as Row[], rowCount: 0 };
      },
    },
    plan: () => last!,
  };
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/** The plan's access to call_records in short ("team_outcome walk", "bitmap team_time + sort", "seq scan"). */
function accessOf(plan: PlanNode): string {
  // The exists flags' lookups of gateways and servers (SubPlans) are the same for every shape: left out.
  const own = nodes(plan).filter((node) => node['Parent Relationship'] !== 'SubPlan');
  const parts: string[] = [];
  for (const node of own) {
    const index = node['Index Name']?.replace(/^call_records_/, '');
    if (node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'call_records') parts.push('seq scan');
    if (node['Node Type'] === 'Index Scan' && node['Relation Name'] === 'call_records') parts.push(`${index} walk`);
    if (node['Node Type'] === 'Index Only Scan' && node['Relation Name'] === 'call_records') parts.push(`${index} index-only`);
    if (node['Node Type'] === 'Bitmap Index Scan' && node['Index Name']?.startsWith('call_records')) parts.push(`bitmap ${index}`);
    if (node['Node Type'] === 'Sort' || node['Node Type'] === 'Incremental Sort') parts.push(node['Node Type'].toLowerCase());
  }
  return parts.join(' + ');
}

/** call_records rows the plan looked at: those it returned and those its filters threw away. */
function rowsRead(plan: PlanNode): number {
  return nodes(plan)
    .filter((node) => node['Relation Name'] === 'call_records' || node['Node Type'] === 'Bitmap Heap Scan')
    .filter((node) => node['Parent Relationship'] !== 'SubPlan')
    .reduce((sum, node) => sum + ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * (node['Actual Loops'] ?? 1), 0);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The statement run RUNS times after one warm-up: median execution ms, and the last run's plan. */
async function measure(run: (db: Queryable) => Promise<unknown>, db: Queryable): Promise<{ ms: number; explained: Explained }> {
  const probe = explaining(db);
  await run(probe.db);
  const times: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    await run(probe.db);
    times.push(probe.plan()['Execution Time']);
  }
  return { ms: median(times), explained: probe.plan() };
}

const cell = (result: { ms: number; explained: Explained }) => {
  const plan = result.explained.Plan;
  const buffers = (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0);
  return `${result.ms.toFixed(2)} | ${accessOf(plan)} | ${rowsRead(plan).toLocaleString('en')} | ${buffers.toLocaleString('en')}`;
};

async function cases(client: pg.Client): Promise<Case[]> {
  const one = async <T>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows[0] as T;
  const team = (no: number) => one<{ team_id: string }>('SELECT team_id FROM bench.teams WHERE team_no = $1', [no]).then((r) => r.team_id);
  const [big, mid, small] = [await team(1), await team(5), await team(50)];
  const gateway = (no: number, last: boolean) =>
    one<{ id: string }>(`SELECT id FROM bench.gateways WHERE team_no = $1 ORDER BY idx ${last ? 'DESC' : ''} LIMIT 1`, [no]).then((r) => r.id);
  const server = (no: number, last: boolean) =>
    one<{ id: string }>(`SELECT id FROM bench.servers WHERE team_no = $1 ORDER BY idx ${last ? 'DESC' : ''} LIMIT 1`, [no]).then((r) => r.id);
  // A person the spread gives few calls: one of the highest-numbered who made any.
  const heavyUser = (await one<{ id: string }>('SELECT id FROM bench.people WHERE team_no = 1 AND idx = 0')).id;
  const rareUser = (await one<{ principal_user_id: string }>(
    `SELECT principal_user_id FROM catalog.call_records WHERE team_id = $1 AND principal_user_id IN
       (SELECT id FROM bench.people WHERE team_no = 1 AND idx BETWEEN 2900 AND 2999) LIMIT 1`,
    [big],
  )).principal_user_id;
  const { ends_at: endsAt } = await one<{ ends_at: Date }>('SELECT ends_at FROM bench.seed');
  const ago = (hours: number) => new Date(endsAt.getTime() - hours * 3_600_000).toISOString();
  const [gwTop, gwRare, srvTop, srvRare] = [await gateway(1, false), await gateway(1, true), await server(1, false), await server(1, true)];
  const oldDay = { since: ago(11 * 24), until: ago(10 * 24) };
  const of = (name: string, filter: Filter, teamId = big): Case => ({ name, teamId, filter });
  return [
    of('no filter', {}),
    of('no filter, mid team (~2 %)', {}, mid),
    of('no filter, small team (~0.4 %)', {}, small),
    of(`no filter, a team (4.5 %) quiet for ${QUIET_DAYS} days`, {}, await team(3)),
    of('gateway (busiest)', { gatewayId: gwTop }),
    of('gateway (least used)', { gatewayId: gwRare }),
    of('gateway of another team (none)', { gatewayId: await gateway(2, false) }),
    of('server (busiest)', { serverId: srvTop }),
    of('server (least used)', { serverId: srvRare }),
    of('outcome=error', { outcome: 'error' }),
    of('outcome=cancelled', { outcome: 'cancelled' }),
    of('method=tools/call', { method: 'tools/call' }),
    of('method=prompts/get', { method: 'prompts/get' }),
    of('method=completion/complete', { method: 'completion/complete' }),
    of('method none has (typo)', { method: 'tools/calls' }),
    of('method=completion/complete, small team', { method: 'completion/complete' }, small),
    of('user (heaviest)', { userId: heavyUser }),
    of('user (occasional)', { userId: rareUser }),
    of('since 1 h ago', { since: ago(1) }),
    of('since 5 min ago, small team', { since: ago(1 / 12) }, small),
    of('one day, 10 days ago', oldDay),
    of('until 20 days ago', { until: ago(20 * 24) }),
    of('gateway + outcome=error', { gatewayId: gwTop, outcome: 'error' }),
    of('server + method=tools/call', { serverId: srvTop, method: 'tools/call' }),
    of('server + outcome=timeout', { serverId: srvTop, outcome: 'timeout' }),
    of('user + outcome=error', { userId: heavyUser, outcome: 'error' }),
    of('outcome=error + one day, 10 days ago', { outcome: 'error', ...oldDay }),
    of('gateway + one day, 10 days ago', { gatewayId: gwTop, ...oldDay }),
    of('method=prompts/get + one day, 10 days ago', { method: 'prompts/get', ...oldDay }),
    of('gateway + server + user', { gatewayId: gwTop, serverId: srvTop, userId: heavyUser }),
    of('gateway (least used) + outcome=cancelled', { gatewayId: gwRare, outcome: 'cancelled' }),
    of('gateway of another team + outcome=error', { gatewayId: await gateway(2, false), outcome: 'error' }),
    of('server (least used) + user (occasional)', { serverId: srvRare, userId: rareUser }),
    of('gateway (least used) + method=prompts/get', { gatewayId: gwRare, method: 'prompts/get' }),
  ];
}

/** Whether BENCH_CATALOG_MIGRATIONS names a schema before 0015, whose list was ordered by id. */
const BY_ID = LAST_MIGRATION !== undefined && LAST_MIGRATION < '0015';

/**
 * The list's statement before migration 0015, for the "before" column: newest id first, the cursor an id. The same
 * text as then, so the same plans.
 */
function listById(db: Queryable, teamId: string, filter: Filter, beforeId?: string) {
  const where = whereOf(teamId, filter);
  const conditions = where.sql.replace(/(\w+) (=|>=|<=) \$/g, 'c.$1 $2 $');
  const params = [...where.params, ...(beforeId ? [beforeId] : []), PAGE + 1];
  return db.query(
    `SELECT c.*, EXISTS (SELECT 1 FROM catalog.gateways g WHERE g.id = c.gateway_id) AS gateway_exists,
            (c.server_id IS NOT NULL AND EXISTS (SELECT 1 FROM catalog.mcp_servers s WHERE s.id = c.server_id)) AS server_exists
       FROM (SELECT * FROM catalog.call_records c WHERE ${conditions}${beforeId ? ` AND c.id < $${params.length - 1}` : ''}
              ORDER BY c.id DESC LIMIT $${params.length}) c
      ORDER BY c.id DESC`,
    params,
  );
}

async function listTable(client: pg.Client, db: Database): Promise<void> {
  console.log(`\n| case | matching | first page ms | plan | rows read | buffers | later page ms | plan | rows read | buffers |`);
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const { name, teamId, filter } of await cases(client)) {
    const where = whereOf(teamId, filter);
    const matching = Number((await client.query(`SELECT count(*) AS n FROM catalog.call_records WHERE ${where.sql}`, where.params)).rows[0].n);
    const list = (after?: { position: string; id: string }) => (q: Queryable) =>
      BY_ID ? listById(q, teamId, filter, after?.id) : listCallRecords(q, { ...filter, teamId, limit: PAGE + 1, ...(after ? { after } : {}) });
    const first = await measure(list(), db);
    let later = '— | | |';
    if (matching > PAGE) {
      // The cursor of the page that starts there, as the list makes it (the list's order, the record's exact time).
      const offset = Math.min(DEEP_OFFSET, Math.floor(matching / 2));
      const { rows } = await client.query(
        `SELECT id, occurred_at::text AS position FROM catalog.call_records WHERE ${where.sql}
          ORDER BY ${BY_ID ? 'id DESC' : 'occurred_at DESC, id DESC'} OFFSET ${offset} LIMIT 1`,
        where.params,
      );
      later = cell(await measure(list({ position: rows[0].position, id: String(rows[0].id) }), db));
    }
    console.log(`| ${name} | ${matching.toLocaleString('en')} | ${cell(first)} | ${later} |`);
  }
  // A record a quarter of the way back from the newest.
  const { rows } = await client.query(
    `SELECT id, team_id FROM catalog.call_records ORDER BY id DESC OFFSET (SELECT count(*) / 4 FROM catalog.call_records) LIMIT 1`,
  );
  const [id, teamId] = [String(rows[0].id), rows[0].team_id as string];
  console.log(`| op 6, one call | 1 | ${cell(await measure((q) => findCallRecord(q, teamId, id), db))} | | | | |`);
  console.log(`| op 6, another team's call | 0 | ${cell(await measure((q) => findCallRecord(q, randomUUID(), id), db))} | | | | |`);
}

/** The recorder's batch: 500 calls in 25 contexts (team, gateway, server, person) across the ten busiest teams. */
async function insertBatches(client: pg.Client, url: string): Promise<void> {
  const { rows: contextRows } = await client.query(
    `SELECT t.team_id, g.id AS gateway_id, g.slug AS gateway_slug, g.name AS gateway_name, s.id AS server_id, s.slug AS server_slug,
            s.name AS server_name, p.id AS person_id, p.name AS person_name, p.email
       FROM bench.teams t JOIN bench.gateways g ON g.team_no = t.team_no AND g.idx = 0
       JOIN bench.servers s ON s.team_no = t.team_no JOIN bench.people p ON p.team_no = t.team_no AND p.idx < 3
      WHERE t.team_no <= 10 ORDER BY random() LIMIT 25`,
  );
  const contexts: NewCallContext[] = contextRows.map((row) => ({
    teamId: row.team_id,
    gateway: { id: row.gateway_id, slug: row.gateway_slug, name: row.gateway_name },
    server: { id: row.server_id, slug: row.server_slug, name: row.server_name },
    principal: { kind: 'user', userId: row.person_id, displayName: row.person_name, email: row.email, oauthClientName: 'cursor', oauthClientVerified: true },
    principalUserId: row.person_id,
    clientName: 'cursor',
  }));
  const batch = (): NewCall[] =>
    Array.from({ length: 500 }, (_, i) => ({
      eventId: randomUUID(),
      context: i % contexts.length,
      occurredAt: new Date().toISOString(),
      method: 'tools/call',
      exposedName: 'server0_tool3',
      outcome: i % 40 === 0 ? 'error' : 'ok',
      errorClass: i % 40 === 0 ? 'tool_error' : '',
      providerSlug: '',
      latencyMs: 12,
      requestBytes: 300,
      responseBytes: 2_000,
      requestId: randomUUID(),
      payloads: null,
    }));
  // One connection, so its backend's CPU (read from /proc, as steady as wall time is not on a shared machine) is the
  // statements' own.
  const writer = createPostgresDatabase({ url, poolMax: 1, logger });
  try {
    const { pid } = (await writer.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!;
    const store = () => writer.transaction((tx) => insertCallRecords(tx, { contexts, calls: batch() }));
    for (let i = 0; i < 5; i += 1) await store();
    const times: number[] = [];
    const cpuBefore = cpuTimes(pid);
    for (let i = 0; i < BATCHES; i += 1) {
      const started = performance.now();
      await store();
      times.push(performance.now() - started);
    }
    const cpuAfter = cpuTimes(pid);
    const cpuMicroseconds = ((cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system) * 1e6) / (BATCHES * 500);
    const sorted = [...times].sort((a, b) => a - b);
    console.log(
      `\n500-record batch insert (one transaction, the store's statement), ${BATCHES} batches: median ${median(times).toFixed(1)} ms, ` +
        `p90 ${sorted[Math.floor(sorted.length * 0.9)]!.toFixed(1)} ms; PostgreSQL backend CPU ${cpuMicroseconds.toFixed(1)} µs per record`,
    );
  } finally {
    await writer.close();
  }
}

/** The retention's chunk under EXPLAIN (rolled back), then every chunk of the expired day for real. */
async function retention(db: Database): Promise<void> {
  let plan: Explained | undefined;
  await db
    .transaction(async (tx) => {
      const probe = explaining(tx);
      await deleteExpiredCallRecords(probe.db, 30, 5_000);
      plan = probe.plan();
      throw new Error('rollback');
    })
    .catch(() => undefined);
  console.log(`\nretention chunk (5,000, rolled back): ${plan!['Execution Time'].toFixed(1)} ms, ${accessOf(plan!.Plan)}`);
  const times: number[] = [];
  let deleted = 0;
  for (;;) {
    const started = performance.now();
    const count = await deleteExpiredCallRecords(db, 30, 5_000);
    if (count === 0) break;
    times.push(performance.now() - started);
    deleted += count;
  }
  console.log(`retention: ${deleted.toLocaleString('en')} expired records in ${times.length} chunks, median ${median(times).toFixed(0)} ms, slowest ${Math.max(...times).toFixed(0)} ms per chunk`);
}

async function main(): Promise<void> {
  const adminUrl = infraUrl('postgres');
  if (!adminUrl) throw new Error('set TEST_POSTGRES_URL');
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE])).rows.length > 0;
  if (exists && !KEEP) await admin.query(`DROP DATABASE ${DATABASE} WITH (FORCE)`);
  if (!exists || !KEEP) await admin.query(`CREATE DATABASE ${DATABASE}`);
  const url = new URL(adminUrl);
  url.pathname = `/${DATABASE}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  const db = createPostgresDatabase({ url: url.toString(), poolMax: 2, logger, timeouts: { statementMs: 600_000, readMs: 610_000 } });
  try {
    const started = performance.now();
    const migrations = (await serviceMigrations('catalog', catalogService.migrationsDir)).filter(
      (migration) => !LAST_MIGRATION || migration.id.startsWith('runtime_') || migration.id <= LAST_MIGRATION,
    );
    const applied = await migrate(db, { schema: 'catalog', migrations, logger });
    console.log(`migrations applied: ${applied.join(', ') || 'none'} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
    if (!(await seeded(client))) await seedCallRecords(client, ROWS);
    const { rows } = await client.query(
      `SELECT (SELECT count(*) FROM catalog.call_records) AS records,
              pg_size_pretty(pg_table_size('catalog.call_records')) AS heap, pg_size_pretty(pg_indexes_size('catalog.call_records')) AS indexes`,
    );
    console.log(`${Number(rows[0].records).toLocaleString('en')} records, table ${rows[0].heap}, indexes ${rows[0].indexes}`);
    if (STEPS.includes('list')) await listTable(client, db);
    if (STEPS.includes('insert')) await insertBatches(client, url.toString());
    if (STEPS.includes('retention')) await retention(db);
  } finally {
    await client.end();
    await db.close();
    if (!KEEP) await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
    await admin.end();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
