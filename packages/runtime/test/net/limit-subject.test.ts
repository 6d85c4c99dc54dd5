import { limitSubjectOf } from '@platform/runtime';

describe('limitSubjectOf: what a per-address limit counts', () => {
  it('counts an IPv6 address by its /64, however it is written', () => {
    const subject = limitSubjectOf('2001:db8:5:6::1');
    expect(subject).toBe('2001:db8:5:6::/64');
    for (const neighbour of ['2001:db8:5:6:ffff:ffff:ffff:fffe', '2001:0db8:0005:0006:0:0:0:abcd', '2001:db8:5:6::1%eth0']) {
      expect(limitSubjectOf(neighbour)).toBe(subject);
    }
    expect(limitSubjectOf('2001:db8:5:7::1')).not.toBe(subject);
    expect(limitSubjectOf('::1')).toBe('0:0:0:0::/64');
  });

  it('counts an IPv4 address, also IPv4-mapped, as itself', () => {
    expect(limitSubjectOf('198.51.100.7')).toBe('198.51.100.7');
    expect(limitSubjectOf('::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(limitSubjectOf('::ffff:198.51.100.8')).toBe('198.51.100.8');
    // Translated by an IPv6-only ingress (NAT64 well-known prefix): each IPv4 client its own, never one /64 for all.
    expect(limitSubjectOf('64:ff9b::198.51.100.7')).toBe('198.51.100.7');
    expect(limitSubjectOf('64:ff9b::c633:6408')).toBe('198.51.100.8');
  });

  it('leaves anything else as it is', () => {
    expect(limitSubjectOf('')).toBe('');
    expect(limitSubjectOf('unknown')).toBe('unknown');
  });
});
