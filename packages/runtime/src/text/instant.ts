/** The instants PostgreSQL reads from an ISO 8601 timestamp: years 0001 to 9999 in UTC (it refuses year 0000). */
const EARLIEST_MS = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST_MS = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * Whether PostgreSQL can hold this ISO 8601 date-time as a timestamptz. The bound is on the instant, not the written
 * year: `0001-01-01T00:00:00+01:00` is in year 0 once converted to UTC. False for text that does not parse.
 */
export function isStorableInstant(value: string): boolean {
  const ms = Date.parse(value);
  return ms >= EARLIEST_MS && ms <= LATEST_MS;
}
