import type { AuthenticateResponse } from '@platform/proto/gen/platform/identity/v1/identity';
import { AuthenticationCache } from '../src/auth/authentication-cache';

const response = () => ({ principal: {} }) as unknown as AuthenticateResponse;

describe('AuthenticationCache', () => {
  it('answers only while the auth generation is the one the entry was stored under', () => {
    const cache = new AuthenticationCache<AuthenticateResponse>({ ttlMs: 10_000, maxEntries: 10 });
    const key = AuthenticationCache.keyOf('rag_x_y', 'team-a');
    cache.set(key, response(), 'g1', undefined, 0);
    expect(cache.get(key, 'g1', 1)).toBeDefined();
    expect(cache.get(key, 'g2', 1)).toBeUndefined();
    // A miss drops the stale entry: the old generation no longer finds it either.
    expect(cache.get(key, 'g1', 1)).toBeUndefined();
  });

  it('forgets entries after the TTL and at the credential\'s own expiry, whichever is first', () => {
    const cache = new AuthenticationCache<AuthenticateResponse>({ ttlMs: 10_000, maxEntries: 10 });
    cache.set('a', response(), null, undefined, 0);
    expect(cache.get('a', null, 9_999)).toBeDefined();
    expect(cache.get('a', null, 10_000)).toBeUndefined();
    cache.set('b', response(), null, new Date(2_000).toISOString(), 0);
    expect(cache.get('b', null, 1_999)).toBeDefined();
    expect(cache.get('b', null, 2_000)).toBeUndefined();
  });

  it('keys by credential and team without holding the credential in clear', () => {
    const key = AuthenticationCache.keyOf('rag_secretvalue', 'team-a');
    expect(key).not.toContain('secretvalue');
    expect(key).not.toBe(AuthenticationCache.keyOf('rag_secretvalue', 'team-b'));
  });

  it('stays within its size bound by dropping the oldest entry', () => {
    const cache = new AuthenticationCache<AuthenticateResponse>({ ttlMs: 10_000, maxEntries: 2 });
    cache.set('a', response(), null, undefined, 0);
    cache.set('b', response(), null, undefined, 0);
    cache.set('c', response(), null, undefined, 0);
    expect(cache.get('a', null, 1)).toBeUndefined();
    expect(cache.get('b', null, 1)).toBeDefined();
    expect(cache.get('c', null, 1)).toBeDefined();
  });
});
