/**
 * The SQLSTATE of an error the server sent (`23505`), else undefined. A socket's errno code (`EPIPE`, `EPERM`) has the
 * same five-letter shape, so only an error carrying the server's severity (pg's and PGlite's DatabaseError) counts.
 */
export function sqlStateOf(error: unknown): string | undefined {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && typeof severity === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}
