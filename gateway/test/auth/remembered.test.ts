import { bumpAuthGeneration, createMemoryCache, type Cache } from '@platform/runtime';
import { createRemembered } from '../../src/auth/remembered';

/** A promise the test settles when it chooses. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** createRemembered over the in-process cache: what is asked, shared and remembered. */
describe('remembered authentication answers', () => {
  let cache: Cache;
  beforeEach(async () => {
    cache = createMemoryCache({ keyPrefix: `t-${Math.random()}:` });
    await bumpAuthGeneration(cache);
  });
  afterEach(() => cache.close());

  const remembered = () => createRemembered<{ who: string }>({ cache, ttlMs: 10_000, expiresAt: () => undefined });

  it('asks once for callers asking about the same credential at the same time, and remembers the answer', async () => {
    const remember = remembered();
    const answer = deferred<{ who: string }>();
    let asked = 0;
    const ask = () => {
      asked++;
      return answer.promise;
    };
    const callers = Array.from({ length: 50 }, () => remember('token-a', 'gateway-1', ask));
    await new Promise((resolve) => setImmediate(resolve));
    expect(asked).toBe(1);
    answer.resolve({ who: 'ada' });
    expect(await Promise.all(callers)).toEqual(Array(50).fill({ who: 'ada' }));
    expect(await remember('token-a', 'gateway-1', ask)).toEqual({ who: 'ada' });
    expect(asked).toBe(1);
    // Another credential, or another scope, is asked about on its own.
    await remember('token-b', 'gateway-1', async () => ({ who: 'bob' }));
    await remember('token-a', 'gateway-2', async () => ({ who: 'ada' }));
  });

  it('shares a refusal with the callers waiting for it, and remembers none', async () => {
    const remember = remembered();
    const refusal = deferred<{ who: string }>();
    let asked = 0;
    const callers = Array.from({ length: 5 }, () =>
      remember('token-a', 'gateway-1', () => {
        asked++;
        return refusal.promise;
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    refusal.reject(new Error('revoked'));
    for (const caller of callers) await expect(caller).rejects.toThrow('revoked');
    expect(asked).toBe(1);
    expect(await remember('token-a', 'gateway-1', async () => ({ who: 'ada' }))).toEqual({ who: 'ada' });
  });

  it('asks again once the auth generation moves, even while an earlier ask is still running', async () => {
    const remember = remembered();
    const first = deferred<{ who: string }>();
    const early = remember('token-a', 'gateway-1', () => first.promise);
    await new Promise((resolve) => setImmediate(resolve));
    await bumpAuthGeneration(cache);
    let askedAfter = 0;
    const late = remember('token-a', 'gateway-1', async () => {
      askedAfter++;
      return { who: 'after the change' };
    });
    expect(await late).toEqual({ who: 'after the change' });
    expect(askedAfter).toBe(1);
    first.resolve({ who: 'before the change' });
    expect(await early).toEqual({ who: 'before the change' });
  });
});
