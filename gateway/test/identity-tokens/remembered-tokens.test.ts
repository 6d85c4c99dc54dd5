import { RememberedTokens } from '../../src/mcp/identity-token';

const TOKEN = Promise.resolve('a token');

/**
 * The identity tokens a signer remembers (identity-token.ts): the ones due for renewal that nobody asks for again are
 * swept, but a sweep that leaves most of the map is not repeated at every new token, only once the map has doubled,
 * so remembering many live tokens does not cost a scan of all of them per new one. A small `minSweepAt` here; the
 * signer's is 10,000.
 */
describe('remembered identity tokens', () => {
  it('drops the tokens due for renewal once the map holds minSweepAt, and keeps the fresh ones', () => {
    const tokens = new RememberedTokens(4);
    for (const key of ['a', 'b', 'c']) tokens.remember(key, TOKEN, 100, 0);
    tokens.remember('fresh', TOKEN, 1_000, 0);
    expect(tokens.size).toBe(4);

    tokens.remember('new', TOKEN, 1_000, 200);
    expect(tokens.size).toBe(2);
    expect(tokens.fresh('fresh', 200)).toBe(TOKEN);
    expect(tokens.fresh('a', 200)).toBeUndefined();
  });

  it('after a sweep that left everything, sweeps again only once the map has doubled', () => {
    const tokens = new RememberedTokens(4);
    for (let n = 0; n < 5; n++) tokens.remember(`old ${n}`, TOKEN, 1_000, 0);
    // The fifth found 4 and swept, leaving all 4: the next sweep waits for 8.
    expect(tokens.size).toBe(5);

    // All five are now due for renewal, and are kept until the map holds 8.
    const sizes: number[] = [];
    for (let n = 0; n < 4; n++) {
      tokens.remember(`new ${n}`, TOKEN, 5_000, 2_000);
      sizes.push(tokens.size);
    }
    expect(sizes).toEqual([6, 7, 8, 4]);
  });

  it('sweeps a logarithmic number of times while ever more live tokens are remembered', () => {
    const tokens = new RememberedTokens(4);
    const count = 4_096;
    // A token already due for renewal: a sweep drops it, which shows, and then one more is put in its place.
    tokens.remember('canary', TOKEN, 0, 1);
    let sweeps = 0;
    for (let n = 0; n < count; n++) {
      const before = tokens.size;
      tokens.remember(`live ${n}`, TOKEN, Number.POSITIVE_INFINITY, 1);
      if (tokens.size > before) continue;
      sweeps++;
      tokens.remember('canary', TOKEN, 0, 1);
    }
    expect(tokens.size).toBe(count + 1);
    // A sweep at every new token past minSweepAt would be about 4,092.
    expect(sweeps).toBeGreaterThan(0);
    expect(sweeps).toBeLessThanOrEqual(Math.log2(count) + 1);
  });

  it('holds at most about twice the live tokens while tokens keep coming and going', () => {
    const tokens = new RememberedTokens(8);
    const lifetime = 100;
    let most = 0;
    for (let now = 0; now < 5_000; now++) {
      tokens.remember(`subject ${now}`, TOKEN, now + lifetime, now);
      most = Math.max(most, tokens.size);
    }
    // At any moment `lifetime` of them are live.
    expect(most).toBeLessThanOrEqual(2 * lifetime + 1);
  });
});
