/**
 * Both adapters return values in the same JS shapes, so code behaves the same on either:
 * - int8/bigint (and bigserial) as a decimal string (pg's default; PGlite would give a lossy number);
 * - timestamptz as Date; timestamp (without zone) as Date read as UTC, and date as Date at UTC midnight
 *   (pg would read both in the process's local zone, PGlite reads them as UTC).
 * numeric stays a string and json/jsonb are parsed, in both, by default.
 */
export const OID = { INT8: 20, DATE: 1082, TIMESTAMP: 1114 } as const;

export function parseInt8(value: string): string {
  return value;
}

export function parseUtcTimestamp(value: string): Date | string {
  const date = new Date(`${value.replace(' ', 'T')}Z`);
  return Number.isNaN(date.getTime()) ? value : date; // 'infinity' and friends stay strings
}

export function parseUtcDate(value: string): Date | string {
  const date = new Date(`${value}T00:00:00Z`);
  return Number.isNaN(date.getTime()) ? value : date;
}
