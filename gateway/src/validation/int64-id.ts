import { z } from 'zod';

const INT64_MAX = 9223372036854775807n;

/**
 * A path id that is an integer int64 >= 1 (op 6's callId, op 12's entryId). Checked as text, so the whole int64 range
 * stays exact (a JS number is not, past 2^53), but described as what it is: `type` in the metadata replaces the
 * string schema in the OpenAPI document.
 */
export function int64IdParam(description: string) {
  return z
    .string()
    .regex(/^[1-9]\d{0,18}$/, 'must be an integer >= 1')
    .refine((value) => !/^\d+$/.test(value) || BigInt(value) <= INT64_MAX, 'must be an int64')
    .meta({ type: 'integer', format: 'int64', minimum: 1, description, example: 42 });
}
