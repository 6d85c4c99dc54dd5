import { querySummary } from '../../src/db/query-summary';

/** `db.query.summary` as the OTel database conventions generate it: operations and their tables, in written order. */
describe('querySummary', () => {
  it.each([
    ['SELECT id FROM catalog.capabilities WHERE server_id = $1 AND gone_at IS NULL FOR UPDATE', 'SELECT catalog.capabilities'],
    ['UPDATE catalog.capabilities SET gone_at = now() WHERE id = ANY($1::uuid[])', 'UPDATE catalog.capabilities'],
    ['DELETE FROM catalog.gateway_servers WHERE server_id = $1 RETURNING gateway_id', 'DELETE catalog.gateway_servers'],
    ['INSERT INTO catalog.mcp_server_teams (server_id, team_id) SELECT $1, unnest($2::uuid[])', 'INSERT catalog.mcp_server_teams SELECT'],
    ['SELECT * FROM songs, artists WHERE songs.artist_id = artists.id', 'SELECT songs artists'],
    ['SELECT 1 FROM a JOIN b ON a.x = b.y, c WHERE d IN (SELECT e FROM f, g)', 'SELECT a b c SELECT f g'],
    ['SELECT order_date FROM (SELECT * FROM orders o JOIN customers c ON o.customer_id = c.customer_id) x', 'SELECT SELECT orders customers'],
    ['UPDATE a SET x = (SELECT y FROM b WHERE b.id = a.id) FROM c WHERE c.id = a.id', 'UPDATE a SELECT b c'],
    ['DELETE FROM a USING b WHERE a.id = b.id', 'DELETE a b'],
    ['select * from "song list"', 'select "song list"'],
  ])('%s', (sql, summary) => {
    expect(querySummary(sql)).toBe(summary);
  });

  it('keeps only what a statement is, never a value, a parameter, a column or a comment', () => {
    const sql = `-- FROM commented_out
      INSERT INTO t (secret_column) VALUES ('literal-value', $1, 42) ON CONFLICT (a) DO UPDATE SET a = EXCLUDED.a /* FROM hidden */`;
    expect(querySummary(sql)).toBe('INSERT t');
    expect(querySummary(`SELECT $tag$ FROM quoted $tag$, 'FROM literal' FROM real_table`)).toBe('SELECT real_table');
    expect(querySummary(String.raw`SELECT E'it\'s FROM escaped' FROM real_table`)).toBe('SELECT real_table');
  });

  it('takes no function call, comparison, clause or CTE name for a table', () => {
    expect(querySummary('SELECT x FROM jsonb_to_recordset($1::jsonb) AS r(a text), kept WHERE extract(epoch FROM r.at) > 0')).toBe('SELECT kept');
    expect(querySummary('SELECT id FROM a WHERE url IS NOT DISTINCT FROM b.url FOR NO KEY UPDATE OF a SKIP LOCKED')).toBe('SELECT a');
    expect(querySummary('WITH gone AS MATERIALIZED (DELETE FROM s WHERE at < now() RETURNING id) SELECT count(*) FROM gone')).toBe('DELETE s SELECT');
    expect(querySummary('SELECT * FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (a text)) WITH ORDINALITY AS i')).toBe('SELECT');
  });

  it('names a command by its first word and each statement of a script in turn', () => {
    expect(querySummary('BEGIN')).toBe('BEGIN');
    expect(querySummary('SELECT pg_advisory_lock(hashtextextended($1, 0))')).toBe('SELECT');
    expect(querySummary("CREATE TABLE x (id uuid REFERENCES y ON DELETE CASCADE); INSERT INTO x SELECT 1; SET LOCAL search_path TO s")).toBe(
      'CREATE INSERT x SELECT SET',
    );
    expect(querySummary('DO $$ BEGIN DELETE FROM x; END $$')).toBe('DO');
    expect(querySummary('  -- nothing')).toBe('');
  });

  it('stays within 255 characters, cut between parts', () => {
    const tables = Array.from({ length: 40 }, (_, index) => `schema_name.table_${index}`);
    const summary = querySummary(`SELECT * FROM ${tables.join(', ')}`);
    expect(summary.length).toBeLessThanOrEqual(255);
    expect(summary.split(' ').every((part, index) => part === (index === 0 ? 'SELECT' : tables[index - 1]))).toBe(true);
  });
});
