import { timeOrderedUuid } from '../../src/crypto/time-ordered-id';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The 48-bit millisecond timestamp at the front of a version 7 UUID. */
function millisecondsOf(id: string): number {
  return Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

describe('timeOrderedUuid', () => {
  it('is a version 7, RFC 9562 variant UUID carrying the time it was made', () => {
    const before = Date.now();
    const id = timeOrderedUuid();
    const after = Date.now();
    expect(id).toMatch(UUID_V7);
    expect(millisecondsOf(id)).toBeGreaterThanOrEqual(before);
    expect(millisecondsOf(id)).toBeLessThanOrEqual(after);
  });

  it('encodes all 48 bits of the time, big-endian', () => {
    expect(millisecondsOf(timeOrderedUuid(0))).toBe(0);
    expect(timeOrderedUuid(0x0123_4567_89ab).slice(0, 13)).toBe('01234567-89ab');
    expect(millisecondsOf(timeOrderedUuid(2 ** 48 - 1))).toBe(2 ** 48 - 1);
  });

  it('sorts by time: an id of a later millisecond sorts after every id of an earlier one', () => {
    const earlier = Array.from({ length: 50 }, () => timeOrderedUuid(1_795_000_000_000));
    const later = Array.from({ length: 50 }, () => timeOrderedUuid(1_795_000_000_001));
    for (const a of earlier) for (const b of later) expect(a < b).toBe(true);
  });

  it('keeps the rest random: distinct ids within one millisecond, across refills of its random pool', () => {
    const ids = Array.from({ length: 5_000 }, () => timeOrderedUuid(1_795_000_000_000));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(UUID_V7);
    // Every random hex digit position takes many values (a stuck byte would show as one).
    const randomPositions = [15, 16, 17, 20, 21, 22, 24, 30, 35];
    for (const position of randomPositions) expect(new Set(ids.map((id) => id[position])).size).toBeGreaterThan(3);
  });
});
