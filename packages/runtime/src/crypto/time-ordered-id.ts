import { randomFillSync } from 'node:crypto';

/** Random bytes drawn from the CSPRNG a pool at a time, as node's randomUUID does: one call per 256 ids. */
const RANDOM_BYTES_PER_ID = 10;
const POOL_BYTES = RANDOM_BYTES_PER_ID * 256;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/**
 * A UUID version 7 (RFC 9562, section 5.7): the Unix time in milliseconds in its first 48 bits, then 74 random bits.
 * Ids made later sort later (to the millisecond), so a B-tree index on them grows at its right edge instead of
 * splitting pages all over (node's randomUUID makes version 4, random throughout): cheaper inserts and WAL for tables
 * that store an id per event, and an index that stays in memory. The random bits keep ids unguessable; the time they
 * reveal is the event's own, stored beside it anyway.
 */
export function timeOrderedUuid(now = Date.now()): string {
  if (offset === POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const at = offset;
  offset += RANDOM_BYTES_PER_ID;
  // 48-bit big-endian milliseconds: the high 16 bits and the low 32 bits, each within the safe-integer range.
  const high = Math.floor(now / 2 ** 32);
  const low = now >>> 0;
  return (
    HEX[(high >>> 8) & 0xff]! +
    HEX[high & 0xff]! +
    HEX[low >>> 24]! +
    HEX[(low >>> 16) & 0xff]! +
    '-' +
    HEX[(low >>> 8) & 0xff]! +
    HEX[low & 0xff]! +
    '-' +
    HEX[0x70 | (pool[at]! & 0x0f)]! + // version 7
    HEX[pool[at + 1]!]! +
    '-' +
    HEX[0x80 | (pool[at + 2]! & 0x3f)]! + // variant 10xx (RFC 9562)
    HEX[pool[at + 3]!]! +
    '-' +
    HEX[pool[at + 4]!]! +
    HEX[pool[at + 5]!]! +
    HEX[pool[at + 6]!]! +
    HEX[pool[at + 7]!]! +
    HEX[pool[at + 8]!]! +
    HEX[pool[at + 9]!]!
  );
}
