/**
 * What a failed statement's error may not carry out of the db module: the values bound to it. Callers log such
 * errors whole (the gRPC server logs an internal error with its cause), and the values are what the statement
 * was writing: a key's secret digest, a password hash.
 *
 * - `params` (and `queryOptions`): PGlite attaches the statement's bound parameters to its errors.
 * - `detail`: PostgreSQL (both adapters) puts row values there: `Key (email)=(…) already exists`, `Failing row
 *   contains (…)`. The SQLSTATE `code`, `message`, `constraint`, `table` and `column` stay: enough to tell what
 *   failed (isUniqueViolation reads `code`), without what was being stored.
 */
const BOUND_VALUE_FIELDS = ['params', 'queryOptions', 'detail'] as const;

/** Removes the bound values from a statement's error (in place, so its class and stack stay) and returns it. */
export function withoutBoundValues(error: unknown): unknown {
  if (error === null || typeof error !== 'object') return error;
  const fields = error as Record<string, unknown>;
  for (const field of BOUND_VALUE_FIELDS) {
    if (field in fields) delete fields[field];
  }
  return error;
}
