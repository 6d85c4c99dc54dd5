import { AllowedNetworksError, allowedNetworksFromEnv, isAddressAllowed, isAdmittableByAllowedNetworks, parseAllowedNetworks } from '../../src/net';

describe('isAddressAllowed', () => {
  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '2606:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8', // mapped: judged as the IPv4 it carries
    '172.32.0.1', // just past 172.16.0.0/12
    '100.128.0.1', // just past 100.64.0.0/10
    '198.20.0.1', // just past 198.18.0.0/15
    '11.0.0.1',
  ])('allows the public unicast address %s', (address) => {
    expect(isAddressAllowed(address, [])).toEqual({ allowed: true });
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['127.1', 'loopback'],
    ['2130706433', 'loopback'],
    ['0x7f.1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.1.1', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'zoneId'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.255', 'carrierGradeNat'],
    ['64:ff9b::a9fe:a9fe', 'cloudMetadata'], // NAT64 to the metadata service: named for where it leads
    ['64:ff9b::a00:1', 'nat64'],
    ['64:ff9b:1::1', 'nat64'],
    ['2002:a9fe:a9fe::', 'cloudMetadata'],
    ['2002:a00:1::', 'sixToFour'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.1', 'documentation'],
    ['203.0.113.1', 'documentation'],
    ['2001:db8::1', 'documentation'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fec0::1', 'siteLocal'],
    ['192.0.0.8', 'ietfProtocolAssignments'],
    ['169.254.169.254', 'cloudMetadata'],
    ['169.254.170.2', 'cloudMetadata'],
    ['100.100.100.200', 'cloudMetadata'],
    ['fd00:ec2::254', 'cloudMetadata'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['0:0:0:0:0:ffff:169.254.169.254', 'cloudMetadata'],
    ['::ffff:0:10.0.0.1', 'private'], // IPv4-translated (RFC 6145)
    ['::127.0.0.1', 'ipv4Compatible'],
    ['::8.8.8.8', 'ipv4Compatible'], // deprecated form: refused whatever it carries
    ['100::1', 'discard'],
    ['1::1', 'notGlobalUnicast'],
    ['not-an-ip', 'notAnIpAddress'],
    ['', 'notAnIpAddress'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(isAddressAllowed(address, [])).toEqual({ allowed: false, reason });
  });

  it('allows addresses inside ALLOWED_INTERNAL_NETWORKS and only those', () => {
    const networks = parseAllowedNetworks('10.1.0.0/16,fd12::/16,127.0.0.0/8');
    expect(isAddressAllowed('10.1.2.3', networks).allowed).toBe(true);
    expect(isAddressAllowed('10.2.0.1', networks)).toEqual({ allowed: false, reason: 'private' });
    expect(isAddressAllowed('fd12:3456::1', networks).allowed).toBe(true);
    expect(isAddressAllowed('fd13::1', networks).allowed).toBe(false);
    // The mapped form is unwrapped first, so the IPv4 CIDR covers it.
    expect(isAddressAllowed('::ffff:127.0.0.1', networks).allowed).toBe(true);
    expect(isAddressAllowed('::1', networks).allowed).toBe(false);
  });

  it('never allows metadata, unspecified, multicast or broadcast addresses, whatever the allowed networks', () => {
    const everything = parseAllowedNetworks('0.0.0.0/0,::/0');
    for (const address of ['169.254.169.254', '169.254.170.2', '100.100.100.200', 'fd00:ec2::254', '0.0.0.0', '::', '224.0.0.1', 'ff02::1', '255.255.255.255']) {
      expect(isAddressAllowed(address, everything).allowed).toBe(false);
    }
    expect(isAddressAllowed('169.254.1.1', parseAllowedNetworks('169.254.0.0/16')).allowed).toBe(true);
    expect(isAddressAllowed('169.254.169.254', parseAllowedNetworks('169.254.0.0/16'))).toEqual({ allowed: false, reason: 'cloudMetadata' });
  });

  it('never allows the metadata service through a translator, even when the translator\'s prefix is admitted', () => {
    // An IPv6-only cluster with DNS64 admits 64:ff9b::/96, where every IPv4-only public host resolves to.
    const translators = parseAllowedNetworks('64:ff9b::/96,64:ff9b:1::/48,2002::/16,::/96,::1/128');
    for (const address of ['64:ff9b::a9fe:a9fe', '64:ff9b::169.254.170.2', '64:ff9b:1::a9fe:a9fe', '2002:a9fe:a9fe::1', '::a9fe:a9fe', '64:ff9b::e000:1']) {
      expect([address, isAddressAllowed(address, translators).allowed]).toEqual([address, false]);
      expect([address, isAdmittableByAllowedNetworks(address)]).toEqual([address, false]);
    }
    // What they carry otherwise is the operator's to admit, ::1 (0.0.0.1 to a translator) included.
    for (const address of ['64:ff9b::808:808', '64:ff9b::a00:1', '2002:a00:1::1', '::1']) {
      expect([address, isAddressAllowed(address, translators).allowed]).toEqual([address, true]);
      expect([address, isAdmittableByAllowedNetworks(address)]).toEqual([address, true]);
    }
  });
});

describe('parseAllowedNetworks', () => {
  it('reads a comma-separated list, ignoring blanks; empty means none', () => {
    expect(parseAllowedNetworks(undefined)).toEqual([]);
    expect(parseAllowedNetworks('')).toEqual([]);
    const networks = parseAllowedNetworks(' 10.0.0.0/8 , fd00::/8 ,');
    expect(networks.map((network) => [network.text, network.prefixLength])).toEqual([['10.0.0.0/8', 8], ['fd00::/8', 8]]);
    expect(allowedNetworksFromEnv({ ALLOWED_INTERNAL_NETWORKS: '192.168.0.0/16' }).map((network) => network.text)).toEqual(['192.168.0.0/16']);
  });

  it.each(['nope', '10.0.0.0', '10.0.0.0/33', '10.1/8', '0x0a.0.0.0/8', 'fd00::/129', 'fe80::%eth0/64', '10.0.0.0/-1', '300.0.0.0/8'])(
    'refuses the bad entry %s with an error naming it',
    (entry) => {
      const attempt = () => parseAllowedNetworks(`10.0.0.0/8,${entry}`);
      expect(attempt).toThrow(AllowedNetworksError);
      expect(attempt).toThrow(`ALLOWED_INTERNAL_NETWORKS entry "${entry}"`);
    },
  );
});
