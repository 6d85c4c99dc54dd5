import type { LookupAddress } from 'node:dns';
import { AddressNotAllowedError, assertUrlAllowed, guardedFetch, type Resolver } from '../../src/net';
import { startTcpSink, type CountingServer } from './fixtures';

/**
 * Every attempt below points (where it can) at a local TCP sink listening on all local addresses: if the guard let
 * one through, the sink would count a connection. Each must be refused with AddressNotAllowedError and the sink
 * must end the file having seen nothing.
 */
let sink: CountingServer;
beforeAll(async () => {
  sink = await startTcpSink();
});
afterAll(async () => {
  expect(sink.connections()).toBe(0);
  await sink.close();
});

const fetchOptions = { allowedNetworks: [], timeoutMs: 3000, maxBytes: 1024, allowHttp: true };

const addressAttempts: string[] = [
  '127.0.0.1',
  '127.1',
  '127.0.1',
  '127.255.255.254',
  '2130706433',
  '0x7f.1',
  '0x7f000001',
  '017700000001',
  '0177.0.0.1',
  '127.0.0.1.',
  '１２７.０.０.１', // full-width digits, folded by IDNA
  '0',
  '0.0.0.0',
  '0x0',
  '[::]',
  '[::1]',
  '[0:0:0:0:0:0:0:1]',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '[0:0:0:0:0:ffff:169.254.169.254]',
  '[::ffff:a9fe:a9fe]',
  '[::ffff:0:127.0.0.1]',
  '[::127.0.0.1]',
  '[64:ff9b::a9fe:a9fe]',
  '[64:ff9b::127.0.0.1]',
  '[64:ff9b:1::a9fe:a9fe]',
  '[2002:a9fe:a9fe::]',
  '[2002:7f00:1::]',
  '[2001:0:4136:e378:8000:63bf:3fff:fdd2]',
  '[fe80::1%25eth0]',
  '[fe80::1]',
  '[fd00:ec2::254]',
  '[fc00::1]',
  '[fec0::1]',
  '[ff02::1]',
  '[2001:db8::1]',
  '100.64.0.1',
  '100.127.255.254',
  '192.168.1.1',
  '10.0.0.1',
  '012.0.0.1',
  '172.16.0.1',
  '172.31.255.255',
  '169.254.169.254',
  '0xa9fea9fe',
  '2852039166',
  '0251.0376.0251.0376',
  '169.254.170.2',
  '100.100.100.200',
  '224.0.0.1',
  '255.255.255.255',
  '198.18.0.1',
  '240.0.0.1',
  '192.0.0.170',
  '192.0.2.1',
  '203.0.113.7',
];

describe('address guard bypass corpus: literal hosts', () => {
  it('holds at least 40 attempts', () => {
    expect(addressAttempts.length).toBeGreaterThanOrEqual(40);
  });

  it.each(addressAttempts)('refuses https://%s before connecting', async (host) => {
    await expect(guardedFetch(`https://${host}:${sink.port}/`, fetchOptions)).rejects.toBeInstanceOf(AddressNotAllowedError);
    await expect(guardedFetch(`http://${host}:${sink.port}/`, fetchOptions)).rejects.toBeInstanceOf(AddressNotAllowedError);
    await expect(assertUrlAllowed(`https://${host}:${sink.port}/`, [])).rejects.toMatchObject({ code: 'address_not_allowed', httpStatus: 422 });
  });
});

describe('address guard bypass corpus: host names', () => {
  it.each(['localhost', 'LOCALHOST', 'LocalHost', 'vm'])('refuses %s resolved by the system resolver (/etc/hosts)', async (host) => {
    await expect(guardedFetch(`https://${host}:${sink.port}/`, fetchOptions)).rejects.toBeInstanceOf(AddressNotAllowedError);
    await expect(assertUrlAllowed(`https://${host}:${sink.port}/`, [])).rejects.toBeInstanceOf(AddressNotAllowedError);
  });

  // There is no DNS to the internet here, so these names resolve through an injected resolver standing in for a
  // hostile authoritative server; the addresses are then dialled for real (the sink would see any connection).
  const hostile: Record<string, LookupAddress[]> = {
    'localhost.': [{ address: '127.0.0.1', family: 4 }],
    '127.0.0.1.nip.io': [{ address: '127.0.0.1', family: 4 }],
    'metadata.google.internal': [{ address: '169.254.169.254', family: 4 }],
    'ipv6-loopback.test': [{ address: '::1', family: 6 }],
    'mapped.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
    'mixed.test': [{ address: '93.184.216.34', family: 4 }, { address: '127.0.0.1', family: 4 }],
    'mixed-v6.test': [{ address: '2606:4700::1111', family: 6 }, { address: 'fd00::1', family: 6 }],
    'ecs.test': [{ address: '169.254.170.2', family: 4 }],
  };
  const resolve: Resolver = async (hostname) => {
    const answer = hostile[hostname];
    if (!answer) throw Object.assign(new Error(`no test record for ${hostname}`), { code: 'ENOTFOUND' });
    return answer;
  };

  it.each(Object.keys(hostile))('refuses %s whose records point inside', async (host) => {
    await expect(guardedFetch(`https://${host}:${sink.port}/`, { ...fetchOptions, resolve })).rejects.toBeInstanceOf(AddressNotAllowedError);
    await expect(assertUrlAllowed(`https://${host}:${sink.port}/`, [], { resolve })).rejects.toBeInstanceOf(AddressNotAllowedError);
  });
});

describe('address guard bypass corpus: URL shape', () => {
  it.each([
    'https://user:pass@8.8.8.8/',
    'https://user@8.8.8.8/',
    'https://8.8.8.8@127.0.0.1/',
    'https://:secret@8.8.8.8/',
    'file:///etc/passwd',
    'ftp://8.8.8.8/',
    'gopher://127.0.0.1:6379/_INFO',
    'ws://8.8.8.8/',
    'data:text/plain,hello',
    'not a url',
    '/relative/path',
  ])('refuses %s without any network access', async (url) => {
    await expect(guardedFetch(url, fetchOptions)).rejects.toBeInstanceOf(AddressNotAllowedError);
    await expect(assertUrlAllowed(url, [], { allowHttp: true })).rejects.toBeInstanceOf(AddressNotAllowedError);
  });

  it('refuses plain http unless allowHttp is given', async () => {
    await expect(guardedFetch('http://8.8.8.8/', { ...fetchOptions, allowHttp: false })).rejects.toMatchObject({ reason: 'the scheme must be https:' });
    await expect(assertUrlAllowed('http://8.8.8.8/', [])).rejects.toBeInstanceOf(AddressNotAllowedError);
  });
});
