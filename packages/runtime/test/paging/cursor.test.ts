import { AppError } from '../../src/errors';
import { decodeCursor, encodeCursor, isCursorTimestamp } from '../../src/paging';

const forged = (position: unknown): string => Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
const anyString = (value: unknown): unknown => value;

function refusal(read: () => unknown): AppError | null {
  try {
    read();
    return null;
  } catch (error) {
    return error as AppError;
  }
}

describe('decodeCursor', () => {
  it('reads back what encodeCursor made', () => {
    expect(decodeCursor(encodeCursor({ slug: 'a', id: 7 }), anyString)).toEqual({ slug: 'a', id: 7 });
  });

  it('refuses a NUL in any decoded string or key, however deep, before the reader sees it (400 naming cursor)', () => {
    const positions = [{ slug: 'a\u0000' }, ['2024-01-01 00:00:00+00', 'id\u0000'], { nested: [{ deep: '\u0000' }] }, { 'key\u0000': 'value' }];
    for (const position of positions) {
      const error = refusal(() => decodeCursor(forged(position), anyString));
      expect({ position, code: error?.code }).toEqual({ position, code: 'invalid_request' });
      expect(error?.fields).toEqual([{ field: 'cursor', problem: 'malformed cursor' }]);
    }
  });

  it('refuses what is not JSON, and what the reader does not accept', () => {
    expect(refusal(() => decodeCursor('%%%', anyString))?.code).toBe('invalid_request');
    expect(refusal(() => decodeCursor(forged({ other: 1 }), () => null))?.code).toBe('invalid_request');
  });
});

describe('isCursorTimestamp', () => {
  it('accepts what created_at::text prints, and ISO forms with T and an offset', () => {
    for (const value of [
      '2024-05-01 12:00:00+00',
      '2024-05-01 12:00:00.123456+00',
      '2024-02-29 23:59:59.5-05:30',
      '0001-01-01 00:00:00+00',
      '9999-12-31 23:59:59.999999+00',
      '2024-05-01T12:00:00Z',
      '2024-05-01T12:00:00+0200',
    ]) {
      expect({ value, ok: isCursorTimestamp(value) }).toEqual({ value, ok: true });
    }
  });

  it('refuses values of the right shape that PostgreSQL cannot read as a timestamptz', () => {
    for (const value of [
      '2024-02-31 00:00:00+00',
      '2023-02-29 00:00:00+00',
      '2024-04-31 00:00:00+00',
      '2024-00-10 00:00:00+00',
      '2024-13-01 00:00:00+00',
      '2024-01-00 00:00:00+00',
      '2024-01-01 24:00:00+00',
      '2024-01-01 00:60:00+00',
      '2024-01-01 00:00:60+00',
      '2024-01-01 00:00:00+16',
      '2024-01-01 00:00:00+05:60',
      '0000-01-01 00:00:00+00',
      '2024-01-01',
      '2024-01-01 00:00:00+00\u0000',
      'yesterday',
    ]) {
      expect({ value, ok: isCursorTimestamp(value) }).toEqual({ value, ok: false });
    }
  });
});
