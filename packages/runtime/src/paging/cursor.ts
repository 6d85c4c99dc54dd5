import { AppError } from '../errors';

/**
 * Opaque list cursors: the position after which the next page starts, as base64url JSON. Clients treat them as
 * opaque; a service reads back only what `accept` recognises, and anything else is one clear 400 naming `cursor`.
 */
export function encodeCursor(position: object): string {
  return Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
}

export function decodeCursor<T>(cursor: string, accept: (value: unknown) => T | null): T {
  let position: T | null = null;
  try {
    position = accept(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown);
  } catch {
    // not JSON: malformed, as below
  }
  if (position === null) {
    throw AppError.invalid('The cursor is malformed; start again from the first page', [{ field: 'cursor', problem: 'malformed cursor' }]);
  }
  return position;
}
