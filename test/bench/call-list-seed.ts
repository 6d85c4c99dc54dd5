import type pg from 'pg';

/**
 * Seeds `catalog.call_records` for the call-list benchmark with set-based SQL (generate_series), in statements of
 * `CHUNK` rows so each stays short and progress shows. The spread is a busy installation's: 50 teams, one holding
 * 40 % of the records and the rest a long tail; per team several gateways and servers (some used far more than
 * others), many people (a few make most calls) and a mix of methods, outcomes and principal kinds; one busy team
 * (team 3) stopped calling two weeks before the end. Records are
 * stored in time order over 31 days ending now, so ids rise with `occurred_at` as the recorder stores them (within
 * a couple of seconds; one record in a thousand arrives up to an hour late), and every request has an event id that
 * starts with its time, like the recorder's version 7 UUIDs. The first day is older than a 30-day retention.
 */
const CHUNK = 100_000;
const DAYS = 31;
/** The days at the end in which one busy team made no calls (a team that stopped using its gateways). */
export const QUIET_DAYS = 14;

/** Helper tables in a `bench` schema: the teams and what each has, and slots that give methods and outcomes their shares. */
const SETUP = `
  CREATE SCHEMA bench;
  CREATE TABLE bench.seed (rows bigint NOT NULL, ends_at timestamptz NOT NULL);
  CREATE TABLE bench.teams AS
    SELECT t AS team_no, gen_random_uuid() AS team_id, 'team-' || t AS slug,
           CASE WHEN t = 1 THEN 0.40 ELSE 0.60 * (1.0 / t ^ 0.8) / (SELECT sum(1.0 / k ^ 0.8) FROM generate_series(2, 50) k) END AS share,
           CASE WHEN t = 1 THEN 6 ELSE 1 + t % 4 END AS gateways,
           CASE WHEN t = 1 THEN 24 ELSE 3 + t % 8 END AS servers,
           CASE WHEN t = 1 THEN 3000 ELSE 20 + 500 / t END AS people,
           gen_random_uuid() AS service_account_id
      FROM generate_series(1, 50) t;
  CREATE TABLE bench.team_slots AS
    SELECT s AS slot,
           coalesce((SELECT team_no FROM (SELECT team_no, sum(share) OVER (ORDER BY team_no) AS cum FROM bench.teams) c
                      WHERE c.cum * 10000 > s ORDER BY team_no LIMIT 1), 50) AS team_no
      FROM generate_series(0, 9999) s;
  CREATE TABLE bench.gateways AS
    SELECT t.team_no, i AS idx, gen_random_uuid() AS id, t.slug || '-gw' || i AS slug, 'Gateway ' || i AS name
      FROM bench.teams t, generate_series(0, t.gateways - 1) i;
  CREATE TABLE bench.servers AS
    SELECT t.team_no, i AS idx, gen_random_uuid() AS id, 'server' || i AS slug, 'Server ' || i AS name, i % 10 = 3 AS captures
      FROM bench.teams t, generate_series(0, t.servers - 1) i;
  CREATE TABLE bench.people AS
    SELECT t.team_no, i AS idx, gen_random_uuid() AS id, 'Person ' || t.team_no || '.' || i AS name,
           'person' || t.team_no || '.' || i || '@example.test' AS email
      FROM bench.teams t, generate_series(0, t.people - 1) i;
  CREATE TABLE bench.method_slots (slot int PRIMARY KEY, method text NOT NULL, reaches_server boolean NOT NULL);
  INSERT INTO bench.method_slots
    SELECT s, w.method, w.reaches_server
      FROM (SELECT method, reaches_server, sum(share) OVER (ORDER BY ord) - share AS lo, sum(share) OVER (ORDER BY ord) AS hi
              FROM (VALUES (1, 'tools/call', 605, true), (2, 'tools/list', 120, false), (3, 'initialize', 70, false),
                           (4, 'resources/read', 50, true), (5, 'ping', 50, false), (6, 'resources/list', 30, false),
                           (7, 'prompts/list', 25, false), (8, 'prompts/get', 15, true), (9, 'resources/templates/list', 15, false),
                           (10, 'resources/subscribe', 10, true), (11, 'completion/complete', 5, true),
                           (12, 'logging/setLevel', 5, false)) AS v(ord, method, share, reaches_server)) w
      JOIN generate_series(0, 999) s ON s >= w.lo AND s < w.hi;
  CREATE TABLE bench.outcome_slots (slot int PRIMARY KEY, outcome text NOT NULL, error_class text NOT NULL);
  INSERT INTO bench.outcome_slots
    SELECT s, CASE WHEN s < 955 THEN 'ok' WHEN s < 980 THEN 'error' WHEN s < 990 THEN 'refused' WHEN s < 995 THEN 'timeout'
                   WHEN s < 999 THEN 'upstream_unavailable' ELSE 'cancelled' END,
              CASE WHEN s < 955 THEN '' WHEN s < 980 THEN 'tool_error' WHEN s < 990 THEN 'unknown_name' WHEN s < 995 THEN 'timeout'
                   WHEN s < 999 THEN 'connect_failed' ELSE 'client_cancelled' END
      FROM generate_series(0, 999) s;
  CREATE TABLE bench.clients (idx int PRIMARY KEY, name text NOT NULL);
  INSERT INTO bench.clients VALUES (0, 'claude-desktop'), (1, 'cursor'), (2, 'vscode'), (3, 'ci-runner'), (4, 'custom-agent')`;

/** Rows $1..$2 of $3, at times spread over the DAYS ending at $4. */
const INSERT_CHUNK = `
  INSERT INTO catalog.call_records (event_id, team_id, occurred_at, method, exposed_name, gateway_id, gateway_slug,
    gateway_name, server_id, server_slug, server_name, principal, principal_user_id, client_name, outcome, error_class,
    provider_slug, latency_ms, request_bytes, response_bytes, request_id, captured, request_payload, response_payload)
  SELECT (lpad(to_hex((extract(epoch FROM r.occurred_at) * 1000)::bigint), 12, '0') || substr(md5(r.n::text || random()::text), 1, 20))::uuid,
         t.team_id, r.occurred_at, m.method,
         CASE WHEN m.method = 'tools/call' THEN coalesce(s.slug, 'x') || '_tool' || floor(r.r_name * 20)
              WHEN m.method = 'resources/read' THEN 'file:///docs/' || floor(r.r_name * 500) || '.md'
              WHEN m.method = 'prompts/get' THEN coalesce(s.slug, 'x') || '_prompt' || floor(r.r_name * 5) ELSE '' END,
         g.id, g.slug, g.name, s.id, coalesce(s.slug, ''), coalesce(s.name, ''),
         CASE WHEN p.id IS NULL THEN jsonb_build_object('kind', 'service_account', 'serviceAccountId', t.service_account_id,
                                                         'serviceAccountTeamId', t.team_id, 'serviceAccountTeamSlug', t.slug)
              WHEN r.r_kind < 0.80 THEN jsonb_build_object('kind', 'user', 'userId', p.id, 'displayName', p.name, 'email', p.email,
                                                          'oauthClientName', c.name, 'oauthClientVerified', true)
              ELSE jsonb_build_object('kind', 'api_key', 'userId', p.id, 'displayName', p.name, 'email', p.email, 'apiKeyName', 'key-' || p.idx % 3) END,
         p.id, c.name, o.outcome, o.error_class, '', (r.r_name * 400)::int, 100 + (r.r_kind * 2000)::int,
         CASE WHEN o.outcome = 'ok' THEN 200 + (r.r_name * 20000)::int ELSE 120 END, r.request_id,
         coalesce(s.captures, false),
         CASE WHEN s.captures THEN '{"jsonrpc":"2.0","id":' || r.n || ',"method":"' || m.method || '","params":{"name":"tool","arguments":{"q":"' || md5(r.n::text) || '"}}}' END,
         CASE WHEN s.captures THEN '{"jsonrpc":"2.0","id":' || r.n || ',"result":{"content":[{"type":"text","text":"' || repeat(md5(r.request_id), 12) || '"}]}}' END
    FROM (SELECT n,
                 $4::timestamptz - make_interval(secs => ($3 - n) * ${DAYS} * 86400.0 / $3)
                   - CASE WHEN random() < 0.001 THEN random() * interval '1 hour' ELSE random() * interval '2 seconds' END AS occurred_at,
                 floor(random() * 10000)::int AS team_slot, random() AS r_gateway, random() AS r_server, random() AS r_person,
                 random() AS r_kind, random() AS r_name, floor(random() * 1000)::int AS method_slot,
                 floor(random() * 1000)::int AS outcome_slot, floor(random() * 5)::int AS client, gen_random_uuid()::text AS request_id
            FROM generate_series($1::bigint, $2::bigint) n) r
    JOIN bench.team_slots ts ON ts.slot = r.team_slot
    -- Team 3 (4.5 % of the records) stopped calling QUIET_DAYS before the end; the busiest team took its share since.
    JOIN bench.teams t ON t.team_no = CASE WHEN ts.team_no = 3 AND r.n > $3 * (${DAYS - QUIET_DAYS}.0 / ${DAYS}) THEN 1 ELSE ts.team_no END
    JOIN bench.gateways g ON g.team_no = t.team_no AND g.idx = floor(r.r_gateway ^ 2 * t.gateways)
    JOIN bench.method_slots m ON m.slot = r.method_slot
    JOIN bench.outcome_slots o ON o.slot = r.outcome_slot
    JOIN bench.clients c ON c.idx = r.client
    LEFT JOIN bench.servers s ON s.team_no = t.team_no AND s.idx = floor(r.r_server ^ 1.5 * t.servers)
                             AND m.reaches_server AND o.outcome <> 'refused'
    LEFT JOIN bench.people p ON p.team_no = t.team_no AND p.idx = floor(r.r_person ^ 3 * t.people) AND r.r_kind < 0.92
   ORDER BY r.n`;

/** Whether the database already holds a finished seed (a re-run with BENCH_KEEP_DB=1 reuses it). */
export async function seeded(client: pg.Client): Promise<boolean> {
  const { rows } = await client.query(`SELECT to_regclass('bench.seed') IS NOT NULL AS present`);
  if (!rows[0].present) return false;
  return (await client.query('SELECT 1 FROM bench.seed')).rows.length > 0;
}

/** Seeds `rows` records, printing progress; ends with VACUUM ANALYZE, as autovacuum leaves a table in use. */
export async function seedCallRecords(client: pg.Client, rows: number): Promise<void> {
  await client.query('DROP SCHEMA IF EXISTS bench CASCADE');
  await client.query(SETUP);
  const endsAt = new Date();
  const started = performance.now();
  for (let from = 1; from <= rows; from += CHUNK) {
    const to = Math.min(from + CHUNK - 1, rows);
    await client.query(INSERT_CHUNK, [from, to, rows, endsAt]);
    process.stdout.write(`\rseeded ${to.toLocaleString('en')} of ${rows.toLocaleString('en')} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  process.stdout.write('\n');
  await client.query('VACUUM ANALYZE catalog.call_records');
  await client.query('INSERT INTO bench.seed VALUES ($1, $2)', [rows, endsAt]);
}
