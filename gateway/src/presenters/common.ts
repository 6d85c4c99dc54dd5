import { z } from 'zod';

/** int64 fields arrive from gRPC as decimal strings; revisions and counts fit a JSON number. */
export const toNumber = (value: string | undefined): number => (value ? Number(value) : 0);

/** Optional timestamps arrive as undefined; the API shows them as null. */
export const orNull = <T>(value: T | undefined | ''): T | null => (value === undefined || value === '' ? null : value);

export const timestamp = z.string().meta({ format: 'date-time', example: '2026-01-01T00:00:00.000Z' });
export const uuid = z.uuid();
