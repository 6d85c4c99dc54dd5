import type { LookupAddress } from 'node:dns';
import { connect, type LookupFunction } from 'node:net';
import { AddressNotAllowedError, assertUrlAllowed, createGuardedLookup, guardedFetch, parseAllowedNetworks, type Resolver } from '../../src/net';
import { startTcpSink, type CountingServer } from './fixtures';

/** A resolver whose answers change per call, like an attacker's DNS server rebinding a name. */
function rebindingResolver(...answers: LookupAddress[][]): Resolver & { calls: number } {
  const resolver = Object.assign(
    async () => {
      const answer = answers[Math.min(resolver.calls, answers.length - 1)]!;
      resolver.calls += 1;
      return answer;
    },
    { calls: 0 },
  );
  return resolver;
}

function lookupOnce(lookup: LookupFunction, hostname: string, options: { all?: boolean; family?: number } = {}): Promise<unknown> {
  return new Promise((resolve, reject) => {
    lookup(hostname, options, (error, address, family) => (error ? reject(error) : resolve(options.all ? address : { address, family })));
  });
}

const publicAnswer = [{ address: '93.184.216.34', family: 4 }];
const loopbackAnswer = [{ address: '127.0.0.1', family: 4 }];

describe('createGuardedLookup', () => {
  it('checks every lookup, so a name that rebinds to loopback is refused on the second call', async () => {
    const resolve = rebindingResolver(publicAnswer, loopbackAnswer);
    const lookup = createGuardedLookup([], { resolve });
    await expect(lookupOnce(lookup, 'rebind.test')).resolves.toEqual({ address: '93.184.216.34', family: 4 });
    await expect(lookupOnce(lookup, 'rebind.test')).rejects.toMatchObject({ code: 'address_not_allowed', address: '127.0.0.1' });
    expect(resolve.calls).toBe(2);
  });

  it('refuses a name when any of its addresses is refused, rather than keeping the allowed ones', async () => {
    const lookup = createGuardedLookup([], { resolve: async () => [...publicAnswer, { address: '10.0.0.5', family: 4 }] });
    await expect(lookupOnce(lookup, 'mixed.test', { all: true })).rejects.toBeInstanceOf(AddressNotAllowedError);
    await expect(lookupOnce(lookup, 'mixed.test')).rejects.toBeInstanceOf(AddressNotAllowedError);
  });

  it('names an address nothing admits ahead of one ALLOWED_INTERNAL_NETWORKS could admit, so no refusal suggests the setting for it', async () => {
    const lookup = createGuardedLookup([], { resolve: async () => [{ address: '10.0.0.5', family: 4 }, { address: '169.254.169.254', family: 4 }] });
    await expect(lookupOnce(lookup, 'metadata.test')).rejects.toMatchObject({ address: '169.254.169.254', reason: expect.stringContaining('cloudMetadata') });
  });

  it('returns every address in `all` mode (used by Happy Eyeballs) and the first otherwise', async () => {
    const answers = [{ address: '2606:4700::1111', family: 6 }, ...publicAnswer];
    const lookup = createGuardedLookup([], { resolve: async () => answers });
    await expect(lookupOnce(lookup, 'dual.test', { all: true })).resolves.toEqual(answers);
    await expect(lookupOnce(lookup, 'dual.test')).resolves.toEqual({ address: '2606:4700::1111', family: 6 });
  });

  it('passes the requested family to the resolver', async () => {
    const families: number[] = [];
    const lookup = createGuardedLookup([], {
      resolve: async (_hostname, family) => {
        families.push(family);
        return publicAnswer;
      },
    });
    await lookupOnce(lookup, 'a.test', { family: 4 });
    await lookupOnce(lookup, 'a.test', { family: 6 });
    await lookupOnce(lookup, 'a.test', { all: true });
    expect(families).toEqual([4, 6, 0]);
  });

  it('judges literal IPs itself instead of asking the resolver', async () => {
    const resolve = rebindingResolver(publicAnswer);
    const lookup = createGuardedLookup([], { resolve });
    await expect(lookupOnce(lookup, '169.254.169.254')).rejects.toBeInstanceOf(AddressNotAllowedError);
    await expect(lookupOnce(lookup, '8.8.8.8')).resolves.toEqual({ address: '8.8.8.8', family: 4 });
    expect(resolve.calls).toBe(0);
  });

  it('passes resolver failures through unchanged', async () => {
    const lookup = createGuardedLookup([], { resolve: async () => Promise.reject(Object.assign(new Error('nope'), { code: 'ENOTFOUND' })) });
    await expect(lookupOnce(lookup, 'missing.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });
});

describe('guarded lookup on real connections', () => {
  let sink: CountingServer;
  beforeEach(async () => {
    sink = await startTcpSink();
  });
  afterEach(async () => {
    await sink.close();
  });

  function dial(host: string, lookup: LookupFunction): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port: sink.port, lookup });
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', reject);
    });
  }

  it('refuses net.connect to a name resolving to loopback: the server sees no connection', async () => {
    const lookup = createGuardedLookup([], { resolve: async () => loopbackAnswer });
    await expect(dial('internal.test', lookup)).rejects.toBeInstanceOf(AddressNotAllowedError);
    expect(sink.connections()).toBe(0);
  });

  it('connects when ALLOWED_INTERNAL_NETWORKS covers the address', async () => {
    const lookup = createGuardedLookup(parseAllowedNetworks('127.0.0.0/8'), { resolve: async () => loopbackAnswer });
    await dial('internal.test', lookup);
    expect(sink.connections()).toBe(1);
  });

  it('defeats DNS rebinding: the URL passes when saved, the later connection to the rebound address is refused', async () => {
    const resolve = rebindingResolver(publicAnswer, loopbackAnswer);
    await expect(assertUrlAllowed(`https://rebind.test:${sink.port}/`, [], { resolve })).resolves.toBeUndefined();
    await expect(guardedFetch(`https://rebind.test:${sink.port}/`, { allowedNetworks: [], timeoutMs: 3000, maxBytes: 1024, resolve })).rejects.toBeInstanceOf(
      AddressNotAllowedError,
    );
    expect(resolve.calls).toBe(2);
    expect(sink.connections()).toBe(0);
  });
});
