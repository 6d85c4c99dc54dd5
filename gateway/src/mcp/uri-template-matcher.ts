/**
 * Whether a URI matches an MCP resource template, decided as the MCP TypeScript SDK's `UriTemplate.match` (1.32)
 * decides it, but in time linear in the URI's length. The SDK turns a template into an anchored regular expression
 * (`{+dir}/{+file}.json` → `^(.+)/(.+)\.json$`) that V8 runs by backtracking: a template with two or three
 * overlapping expressions costs quadratic or cubic time on a URI that almost matches, and one such read would block
 * the edge's event loop for every tenant. Here the same expression is compiled from the same parts and run as a
 * Thompson automaton (every alternative advanced together, one character at a time): at most the URI's length times
 * the template's size steps, whatever the template. Routing only needs yes or no, so nothing is captured.
 *
 * Mirrors the SDK's `parse` and `partToRegExp` (its limits and patterns): literal text matches itself; `{x}` is
 * `[^/,]+` (exploded `{x*}`: `[^/,]+(?:,[^/,]+)*`); `{+x}` and `{#x}` are `.+`; `{.x}` is `\.[^/,]+`; `{/x}` is `/`
 * and the simple (or exploded) pattern; `{?a,b}` and `{&a,b}` are `?a=[^&]+&b=[^&]+` (with `&` first for `{&…}`).
 * gateway/test/mcp/uri-template-matcher.test.ts checks it against the SDK.
 */

/** The SDK's limits: a longer template or URI, more expressions or a longer expression throw there (never match). */
const MAX_TEMPLATE_LENGTH = 1_000_000;
const MAX_TEMPLATE_EXPRESSIONS = 10_000;
const MAX_REGEX_LENGTH = 1_000_000;
const MAX_URI_LENGTH = 1_000_000;

const OPERATORS = ['+', '#', '.', '/', '?', '&'];
const SLASH = 0x2f;
const COMMA = 0x2c;
const AMPERSAND = 0x26;

/**
 * An automaton state, in typed arrays (the hot loop allocates nothing): consume one character that passes its test
 * and go to `next`, branch to `next` and `other` without consuming, or accept.
 */
const Op = {
  /** The character `arg`. */
  Char: 0,
  /** `[^/,]` */
  SegmentChar: 1,
  /** `.` without the `s` flag: anything but a line terminator. */
  AnyChar: 2,
  /** `[^&]` */
  ValueChar: 3,
  Branch: 4,
  Accept: 5,
} as const;
type Op = (typeof Op)[keyof typeof Op];

function passes(op: Op, arg: number, code: number): boolean {
  switch (op) {
    case Op.Char:
      return code === arg;
    case Op.SegmentChar:
      return code !== SLASH && code !== COMMA;
    case Op.AnyChar:
      return code !== 0x0a && code !== 0x0d && code !== 0x2028 && code !== 0x2029;
    case Op.ValueChar:
      return code !== AMPERSAND;
    default:
      return false;
  }
}

/** The regular expression's source length the SDK would build for an escaped literal. */
const escapedLength = (text: string) => text.length + (text.match(/[.*+?^${}()|[\]\\]/g)?.length ?? 0);

class Builder {
  readonly ops: Op[] = [];
  readonly args: number[] = [];
  readonly nexts: number[] = [];
  readonly others: number[] = [];
  regexLength = 2; // ^ and $

  private push(op: Op, arg: number, next: number, other = -1): void {
    this.ops.push(op);
    this.args.push(arg);
    this.nexts.push(next);
    this.others.push(other);
  }

  get size(): number {
    return this.ops.length;
  }

  literal(text: string, regexLength = escapedLength(text)): void {
    for (let i = 0; i < text.length; i++) this.push(Op.Char, text.charCodeAt(i), this.size + 1);
    this.regexLength += regexLength;
  }

  /** `(X+)` */
  oneOrMore(op: Op, regexLength: number): void {
    const start = this.size;
    this.push(op, 0, start + 1);
    this.push(Op.Branch, 0, start, start + 2);
    this.regexLength += regexLength;
  }

  /** `([^/,]+(?:,[^/,]+)*)`: segments separated by single commas. */
  commaList(): void {
    const start = this.size;
    this.push(Op.SegmentChar, 0, start + 1);
    this.push(Op.Branch, 0, start, start + 2);
    this.push(Op.Branch, 0, start + 3, start + 4);
    this.push(Op.Char, COMMA, start);
    this.regexLength += '([^/,]+(?:,[^/,]+)*)'.length;
  }

  expression(operator: string, names: string[], exploded: boolean): void {
    if (operator === '?' || operator === '&') {
      names.forEach((name, index) => {
        this.literal(index === 0 ? operator : '&', index === 0 ? 2 : 1);
        this.literal(`${name}=`, escapedLength(name) + 1);
        this.oneOrMore(Op.ValueChar, '([^&]+)'.length);
      });
      return;
    }
    if (operator === '+' || operator === '#') return this.oneOrMore(Op.AnyChar, '(.+)'.length);
    if (operator === '.') this.literal('.', 2);
    if (operator === '/') this.literal('/', 1);
    if (exploded && operator !== '.') this.commaList();
    else this.oneOrMore(Op.SegmentChar, '([^/,]+)'.length);
  }

  accept(): void {
    this.push(Op.Accept, 0, -1);
  }
}

export class UriTemplateMatcher {
  private readonly ops: Uint8Array;
  private readonly args: Int32Array;
  private readonly nexts: Int32Array;
  /**
   * For each state, the consuming (or accepting) states it stands for once its branches are followed:
   * `closures[closureStarts[s]]` up to `closures[closureStarts[s + 1]]`. Computed once, so a step follows no branch.
   */
  private readonly closureStarts: Int32Array;
  private readonly closures: Int32Array;
  /** The step that last reached each state: a state is added once per step. */
  private readonly reached: Float64Array;
  /** Steps taken over this matcher's life (the stamps in `reached`, never reused). */
  private steps = 0;
  /** The states alive before and after a character. */
  private current: Int32Array;
  private next: Int32Array;

  /** Throws what the SDK's constructor throws on (an unclosed expression, too long, too many expressions). */
  constructor(template: string) {
    if (template.length > MAX_TEMPLATE_LENGTH) throw new Error(`Template exceeds maximum length of ${MAX_TEMPLATE_LENGTH} characters`);
    const builder = new Builder();
    let text = '';
    let expressions = 0;
    for (let i = 0; i < template.length; ) {
      if (template[i] !== '{') {
        text += template[i++];
        continue;
      }
      if (text) builder.literal(text);
      text = '';
      const end = template.indexOf('}', i);
      if (end === -1) throw new Error('Unclosed template expression');
      if (++expressions > MAX_TEMPLATE_EXPRESSIONS) throw new Error(`Template contains too many expressions (max ${MAX_TEMPLATE_EXPRESSIONS})`);
      const expression = template.slice(i + 1, end);
      const operator = OPERATORS.find((op) => expression.startsWith(op)) ?? '';
      const names = expression
        .slice(operator.length)
        .split(',')
        .map((name) => name.replace('*', '').trim())
        .filter((name) => name.length > 0);
      builder.expression(operator, names, expression.includes('*'));
      i = end + 1;
    }
    if (text) builder.literal(text);
    builder.accept();
    // The SDK refuses to build a longer expression, so such a template never matches there: no state at all.
    const size = builder.regexLength > MAX_REGEX_LENGTH ? 0 : builder.size;
    this.ops = Uint8Array.from(builder.ops.slice(0, size));
    this.args = Int32Array.from(builder.args.slice(0, size));
    this.nexts = Int32Array.from(builder.nexts.slice(0, size));
    const starts: number[] = [];
    const closures: number[] = [];
    for (let state = 0; state < size; state++) {
      starts.push(closures.length);
      const seen = new Set<number>();
      const pending = [state];
      while (pending.length > 0) {
        const at = pending.pop()!;
        if (seen.has(at)) continue;
        seen.add(at);
        if (builder.ops[at] === Op.Branch) pending.push(builder.others[at]!, builder.nexts[at]!);
        else closures.push(at);
      }
    }
    starts.push(closures.length);
    this.closureStarts = Int32Array.from(starts);
    this.closures = Int32Array.from(closures);
    this.reached = new Float64Array(size).fill(-1);
    this.current = new Int32Array(size);
    this.next = new Int32Array(size);
  }

  /**
   * Whether the URI matches, spending at most `budget.steps` (one per alive state per character, taken from it);
   * `undefined` when the budget ran out first.
   */
  matches(uri: string, budget: { steps: number } = { steps: Infinity }): boolean | undefined {
    if (this.ops.length === 0 || uri.length > MAX_URI_LENGTH) return false;
    const { ops, args, nexts, closureStarts, closures, reached } = this;
    let current = this.current;
    let next = this.next;
    let count = 0;
    let step = ++this.steps;
    for (let j = closureStarts[0]!; j < closureStarts[1]!; j++) {
      reached[closures[j]!] = step;
      current[count++] = closures[j]!;
    }
    for (let position = 0; position < uri.length && count > 0; position++) {
      budget.steps -= count;
      if (budget.steps < 0) return undefined;
      const code = uri.charCodeAt(position);
      step = ++this.steps;
      let alive = 0;
      for (let i = 0; i < count; i++) {
        const state = current[i]!;
        if (!passes(ops[state] as Op, args[state]!, code)) continue;
        const target = nexts[state]!;
        for (let j = closureStarts[target]!; j < closureStarts[target + 1]!; j++) {
          const reachedState = closures[j]!;
          if (reached[reachedState] === step) continue;
          reached[reachedState] = step;
          next[alive++] = reachedState;
        }
      }
      [current, next] = [next, current];
      count = alive;
    }
    this.current = current;
    this.next = next;
    for (let i = 0; i < count; i++) if (ops[current[i]!] === Op.Accept) return true;
    return false;
  }
}
