/**
 * A statement's `db.query.summary` (OTel database conventions, "Generating a summary of the query"): its operations
 * and the tables they act on, in the order written: `SELECT catalog.mcp_servers catalog.gateway_servers`,
 * `INSERT catalog.mcp_server_teams SELECT`, `BEGIN`. It names a span, so it is low-cardinality by construction: only
 * keywords and table names are kept, never a literal, a parameter, a column or a comment.
 *
 * A cheap scan, not a parser: a statement other than a query (`BEGIN`, `SET`, `CREATE`…) is summarised by its first
 * word; a query's tables are the names after FROM, JOIN, INTO, UPDATE and USING (not a function call such as
 * `FROM unnest($1)`, nor a CTE's own name).
 */

const QUERY_OPERATIONS = new Set(['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'MERGE']);
/** Words that start a query without being an operation themselves. */
const QUERY_PREFIXES = new Set(['WITH', 'RECURSIVE']);
/** Words a table follows (an UPDATE's table follows the operation itself). */
const TARGET_AFTER = new Set(['FROM', 'JOIN', 'INTO', 'USING']);
/** An operation word after these is part of another clause: `FOR UPDATE`, `FOR NO KEY UPDATE`, `DO UPDATE SET`. */
const NOT_OPERATION_AFTER = new Set(['FOR', 'KEY', 'DO', 'ON']);
/** `IS [NOT] DISTINCT FROM x` compares; it reads no table. */
const NOT_TARGET_AFTER = new Set(['DISTINCT']);
/** Words between FROM/JOIN and the table: `JOIN LATERAL`, `FROM ONLY t`, `FROM ROWS FROM (…)`. */
const TARGET_MODIFIERS = new Set(['LATERAL', 'ONLY', 'ROWS']);
/** Clauses that end a FROM list (after which a comma no longer introduces a table). */
const FROM_LIST_END = new Set(['WHERE', 'GROUP', 'HAVING', 'WINDOW', 'ORDER', 'LIMIT', 'OFFSET', 'FETCH', 'FOR', 'RETURNING', 'SET', 'UNION', 'INTERSECT', 'EXCEPT', 'VALUES']);

/** The conventions' limit; the summary is cut between parts, never inside one. */
const MAX_SUMMARY_LENGTH = 255;

type Token = { kind: 'name'; text: string; word: string } | { kind: 'punct'; text: string } | { kind: 'value' };

// One alternative per token shape; comments, strings and parameters are consumed whole so nothing inside them is read.
const TOKEN = new RegExp(
  [
    /(?<space>\s+|--[^\n]*|\/\*[\s\S]*?\*\/)/.source,
    /(?<value>[Ee]'(?:[^'\\]|\\[\s\S]|'')*'|'(?:[^']|'')*'|\$\d+|\$(?<tag>[A-Za-z_][A-Za-z0-9_]*)?\$[\s\S]*?\$\k<tag>\$|\d+(?:\.\d+)?)/.source,
    /(?<name>(?:"(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_$]*)(?:\s*\.\s*(?:"(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_$]*))*)/.source,
    /(?<punct>[\s\S])/.source,
  ].join('|'),
  'gy',
);

function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(sql); match; match = TOKEN.exec(sql)) {
    const groups = match.groups!;
    if (groups.value !== undefined) tokens.push({ kind: 'value' });
    else if (groups.name !== undefined) {
      const text = groups.name.replace(/\s*\.\s*/g, '.');
      tokens.push({ kind: 'name', text, word: text.toUpperCase() });
    } else if (groups.punct !== undefined) tokens.push({ kind: 'punct', text: groups.punct });
  }
  return tokens;
}

const wordOf = (token: Token | undefined): string | undefined => (token?.kind === 'name' ? token.word : undefined);

/** The names a `WITH` defines (`name AS (`, `name AS [NOT] MATERIALIZED (`): read from, they are no tables. */
function cteNames(tokens: Token[]): Set<string> {
  const names = new Set<string>();
  tokens.forEach((token, index) => {
    if (token.kind !== 'name' || wordOf(tokens[index + 1]) !== 'AS') return;
    let next = index + 2;
    if (wordOf(tokens[next]) === 'NOT') next += 1;
    if (wordOf(tokens[next]) === 'MATERIALIZED') next += 1;
    const open = tokens[next];
    if (open?.kind === 'punct' && open.text === '(') names.add(token.word);
  });
  return names;
}

function truncated(parts: string[]): string {
  let summary = '';
  for (const part of parts) {
    const longer = summary ? `${summary} ${part}` : part;
    if (longer.length > MAX_SUMMARY_LENGTH) break;
    summary = longer;
  }
  return summary;
}

export function querySummary(sql: string): string {
  const tokens = tokenize(sql);
  const ctes = cteNames(tokens);
  const parts: string[] = [];
  // Per parenthesis depth: whether a query operation runs at it (a FROM inside `extract(epoch FROM x)` reads no table).
  const queryAtDepth: boolean[] = [false];
  let statementStart = true;
  let skipStatement = false;
  let expectTarget = false;
  // The depth of the FROM (or USING) list being read, where a comma introduces another table; -1 outside one.
  let fromListDepth = -1;

  for (let index = 0; index < tokens.length; index += 1) {
    const token = tokens[index]!;
    const depth = queryAtDepth.length - 1;
    if (token.kind === 'punct' && token.text === ';') {
      statementStart = true;
      skipStatement = expectTarget = false;
      fromListDepth = -1;
      queryAtDepth.length = 1;
      queryAtDepth[0] = false;
      continue;
    }
    if (skipStatement) continue;
    if (token.kind === 'punct') {
      expectTarget = token.text === ',' && depth === fromListDepth;
      if (token.text === '(') queryAtDepth.push(false);
      else if (token.text === ')' && depth > 0) queryAtDepth.pop();
      if (fromListDepth >= queryAtDepth.length) fromListDepth = -1;
      continue;
    }
    if (token.kind === 'value') {
      expectTarget = false;
      continue;
    }

    if (statementStart) {
      statementStart = false;
      if (!QUERY_OPERATIONS.has(token.word) && !QUERY_PREFIXES.has(token.word)) {
        // A command (BEGIN, SET, CREATE…): its first word says what it does; the rest may be anything (DDL, bodies).
        parts.push(token.text);
        skipStatement = true;
        continue;
      }
    }

    const previous = wordOf(tokens[index - 1]);
    if (expectTarget) {
      if (TARGET_MODIFIERS.has(token.word)) continue;
      expectTarget = false;
      const next = tokens[index + 1];
      const isCall = next?.kind === 'punct' && next.text === '(' && previous !== 'INTO';
      const isClause = QUERY_OPERATIONS.has(token.word) || FROM_LIST_END.has(token.word); // `THEN UPDATE SET`
      if (!isCall && !isClause && !ctes.has(token.word)) {
        parts.push(token.text);
        continue;
      }
    }
    if (QUERY_OPERATIONS.has(token.word) && !NOT_OPERATION_AFTER.has(previous ?? '')) {
      parts.push(token.text);
      queryAtDepth[depth] = true;
      if (fromListDepth === depth) fromListDepth = -1;
      expectTarget = token.word === 'UPDATE';
      continue;
    }
    if (FROM_LIST_END.has(token.word) && fromListDepth === depth) fromListDepth = -1;
    if (TARGET_AFTER.has(token.word) && queryAtDepth[depth] && !NOT_TARGET_AFTER.has(previous ?? '')) {
      expectTarget = true;
      if (token.word === 'FROM' || token.word === 'USING') fromListDepth = depth;
    }
  }
  return truncated(parts);
}
