import { z } from 'zod';

/**
 * The platform's slug rule (teams, gateways, MCP servers): 1 to 63 lowercase letters, digits and hyphens, starting and
 * ending with a letter or digit, and never shaped like a UUID, so `{id or slug}` path parameters are never
 * ambiguous. One rule for request validation, the OpenAPI document and the edge's lookup-free checks.
 */
export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const UUID_LIKE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isSlug(value: unknown): value is string {
  return typeof value === 'string' && SLUG_PATTERN.test(value) && !UUID_LIKE.test(value);
}

/** The request schema of a slug, documented with `description`. */
export function slugSchema(meta: { description: string; example: string }) {
  return z
    .string()
    .regex(SLUG_PATTERN, 'must be 1 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit')
    .refine((value) => !UUID_LIKE.test(value), 'must not look like a UUID')
    .meta(meta);
}
