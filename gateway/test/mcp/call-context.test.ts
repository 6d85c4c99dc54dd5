import type { Gateway, RuntimeServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { isoTimestamp, principalOf, targetOf } from '../../src/mcp/call-context';
import type { McpPrincipal } from '../../src/oauth/resource-server';

describe('call record context', () => {
  it('writes timestamps exactly as Date#toISOString does', () => {
    const base = Date.UTC(2026, 10, 24, 23, 59, 59, 0);
    for (const ms of [base, base + 7, base + 42, base + 999, base + 1_000, base + 1_005, 0, -1, Date.now()]) {
      expect(isoTimestamp(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it('gives the same objects for the same cached gateway, server and principal, and new ones for new', () => {
    const gateway = { id: 'g1', slug: 'tools', name: 'Tools', teamId: 't1' } as Gateway;
    const server = { id: 's1', slug: 'search', name: 'Search' } as RuntimeServer;
    const principal = { personId: 'p1', email: 'a@example.com', displayName: 'A', clientName: 'Claude', clientVerified: true } as McpPrincipal;

    expect(targetOf(gateway)).toEqual({ id: 'g1', slug: 'tools', name: 'Tools' });
    expect(targetOf(gateway)).toBe(targetOf(gateway));
    expect(targetOf(server)).toEqual({ id: 's1', slug: 'search', name: 'Search' });
    expect(targetOf(server)).toBe(targetOf(server));
    expect(principalOf(principal)).toEqual({
      kind: 'user', userId: 'p1', displayName: 'A', email: 'a@example.com', oauthClientName: 'Claude', oauthClientVerified: true,
    });
    expect(principalOf(principal)).toBe(principalOf(principal));

    // A reloaded gateway (a new object, renamed) is described afresh.
    const renamed = { ...gateway, name: 'Renamed' } as Gateway;
    expect(targetOf(renamed)).not.toBe(targetOf(gateway));
    expect(targetOf(renamed).name).toBe('Renamed');
  });
});
