import { AppError } from '../errors';

/**
 * Opaque list cursors: the position after which the next page starts, as base64url JSON. Clients treat them as
 * opaque; a service reads back only what `accept` recognises, and anything else is one clear 400 naming `cursor`.
 *
 * A cursor is client input like any other: whatever it decodes to reaches a statement as a bound parameter. So
 * the reader refuses what PostgreSQL would fail on (a NUL in any string), and a timestamp part is checked with
 * `isCursorTimestamp`, never with its shape alone; a forged cursor must be a 400, not a database error (500).
 */
export function encodeCursor(position: object): string {
  return Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
}

export function decodeCursor<T>(cursor: string, accept: (value: unknown) => T | null): T {
  let position: T | null = null;
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    position = holdsNul(value) ? null : accept(value);
  } catch {
    // not JSON: malformed, as below
  }
  if (position === null) throw malformedCursor();
  return position;
}

/** The one answer to a cursor the server did not make (docs/api.md, Pagination). */
export function malformedCursor(): AppError {
  return AppError.invalid('The cursor is malformed; start again from the first page', [{ field: 'cursor', problem: 'malformed cursor' }]);
}

/** Whether any string or object key in a decoded value holds a NUL, which PostgreSQL's text cannot hold. */
function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(holdsNul);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).some(([key, child]) => key.includes('\u0000') || holdsNul(child));
  }
  return false;
}

/**
 * PostgreSQL's ISO text of a timestamptz as `created_at::text` prints it (`2024-05-01 12:00:00.123456+00`), or
 * with a `T` and a `Z` / `±hh:mm` offset.
 */
const TIMESTAMP_TEXT = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.\d{1,6})?(?:Z|[+-](\d{2})(?::?(\d{2}))?)?$/;
/** The largest UTC offset PostgreSQL reads (±15:59). */
const MAX_OFFSET_HOURS = 15;

/**
 * Whether a cursor's timestamp part is one PostgreSQL reads back as a timestamptz. The shape alone is not enough:
 * `2024-02-31 00:00:00` or `2024-01-01 25:00:00` match it and then fail the cast. The date and time are parsed
 * and printed again: a value that does not exist rolls over (Feb 31 becomes Mar 2) or does not parse, and so
 * does not come back unchanged. Years are 0001 to 9999 (PostgreSQL refuses year 0000).
 */
export function isCursorTimestamp(value: string): boolean {
  const match = TIMESTAMP_TEXT.exec(value);
  if (!match) return false;
  const [, date, time, offsetHours, offsetMinutes] = match;
  if (date!.startsWith('0000')) return false;
  if (Number(offsetHours ?? 0) > MAX_OFFSET_HOURS || Number(offsetMinutes ?? 0) > 59) return false;
  const ms = Date.parse(`${date}T${time}Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 19) === `${date}T${time}`;
}
