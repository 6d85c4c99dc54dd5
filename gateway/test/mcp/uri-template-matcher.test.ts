import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import { UriTemplateMatcher } from '../../src/mcp/uri-template-matcher';

/** A small deterministic generator: the same templates and URIs on every run. */
function generator(seed: number) {
  let state = seed;
  const next = (n: number) => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state % n;
  };
  return { next, pick: <T>(items: readonly T[]) => items[next(items.length)]! };
}

const EXPRESSIONS = ['{a}', '{a*}', '{+a}', '{#a}', '{.a}', '{.a*}', '{/a}', '{/a*}', '{?a}', '{?a,b}', '{&a}', '{&a,b*}', '{}', '{+}', '{?}', '{ a }', '{a,b}', '{a.b}'];
const LITERALS = ['x', '/', ',', '.', '?', '&', '=', 'a', '-', '\n', '(', '*', '\\', '[', '$'];
const CHARACTERS = [...LITERALS, '#', '\u2028', 'é'];
const VALUES = ['x', 'a,b', '', 'x/y', 'a=b', '.x', '/x', '?a=1', '&a=1&b=2', 'a=1', ',', 'a,,b'];

const sdkMatches = (template: UriTemplate, uri: string) => {
  try {
    return template.match(uri) !== null;
  } catch {
    return false;
  }
};

/** The data plane's linear matcher decides as the SDK's UriTemplate.match does, without its backtracking. */
describe('UriTemplateMatcher', () => {
  it('agrees with the SDK on every operator, on literal text with regular-expression characters, and on unparseable templates', () => {
    const { next, pick } = generator(7);
    let compared = 0;
    let matched = 0;
    for (let t = 0; t < 400; t++) {
      let text = '';
      for (let parts = 1 + next(4); parts > 0; parts--) text += next(2) ? pick(EXPRESSIONS) : pick(LITERALS).repeat(1 + next(2));
      const sdk = new UriTemplate(text);
      const mine = new UriTemplateMatcher(text);
      for (let u = 0; u < 60; u++) {
        // Random text, or the template with its expressions replaced (which often matches).
        let uri = '';
        if (u % 2 === 0) uri = text.replace(/\{[^}]*\}/g, () => pick(VALUES));
        else for (let length = next(10); length > 0; length--) uri += pick(CHARACTERS);
        const expected = sdkMatches(sdk, uri);
        if (mine.matches(uri) !== expected) throw new Error(`${JSON.stringify(text)} on ${JSON.stringify(uri)}: the SDK says ${expected}`);
        compared++;
        if (expected) matched++;
      }
    }
    expect(compared).toBe(24_000);
    // Both answers are well represented.
    expect(matched).toBeGreaterThan(3_000);
    expect(compared - matched).toBeGreaterThan(3_000);

    expect(() => new UriTemplate('docs://{open')).toThrow();
    expect(() => new UriTemplateMatcher('docs://{open')).toThrow('Unclosed template expression');
  });

  it('answers at once where the SDK backtracks for seconds, and stops when its budget is spent', () => {
    // The SDK's regular expressions are ^(.+)/(.+)/(.+)\.json$ and ^([^/,]+)([^/,]+)([^/,]+)$: cubic on these URIs
    // (seconds at 2,048 characters). Linear here: were it not, this test would run out of time.
    expect(new UriTemplateMatcher('{+a}/{+b}/{+c}.json').matches('/'.repeat(4096))).toBe(false);
    expect(new UriTemplateMatcher('{a}{b}{c}').matches(`${'a'.repeat(4095)}/`)).toBe(false);
    expect(new UriTemplateMatcher('{+dir}/{+file}.json').matches(`${'a/'.repeat(2046)}b.json`)).toBe(true);

    // A step is one alive state advanced over one character; a budget shared by several calls is spent across them.
    const broad = new UriTemplateMatcher('{+path}x');
    const budget = { steps: 10_000 };
    expect(broad.matches(`${'a'.repeat(1000)}x`, budget)).toBe(true);
    expect(budget.steps).toBeLessThan(10_000);
    expect(broad.matches('a'.repeat(20_000), budget)).toBeUndefined();
    expect(broad.matches('a'.repeat(20_000))).toBe(false);
  });
});
