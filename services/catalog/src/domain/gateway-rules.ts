import { AppError, type FieldError } from '@platform/runtime';

/** A gateway slug: 1 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit. */
export const GATEWAY_SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
export const MAX_GATEWAY_NAME = 100;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a slug is well formed and could name a gateway (a slug never looks like an id, so `{gateway}` is id or slug unambiguously). */
export function isGatewaySlug(slug: string): boolean {
  return GATEWAY_SLUG.test(slug) && !UUID.test(slug);
}

/** The checked fields of a new gateway; a 400 naming every bad field otherwise. */
export function validNewGateway(input: { slug: string; name: string }): { slug: string; name: string } {
  const problems: FieldError[] = [];
  if (!GATEWAY_SLUG.test(input.slug)) {
    problems.push({ field: 'slug', problem: 'must be 1 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit' });
  } else if (UUID.test(input.slug)) {
    problems.push({ field: 'slug', problem: 'must not look like a UUID' });
  }
  const name = input.name.trim();
  if (!name || name.length > MAX_GATEWAY_NAME) problems.push({ field: 'name', problem: `must be 1 to ${MAX_GATEWAY_NAME} characters` });
  if (problems.length > 0) throw AppError.invalid(`Invalid gateway: ${problems.map((p) => p.field).join(', ')}`, problems);
  return { slug: input.slug, name };
}
