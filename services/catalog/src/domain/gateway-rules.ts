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

/**
 * A server's prefix in a gateway: empty, or 1 to 63 lowercase letters, digits, hyphens and single underscores,
 * starting and ending with a letter or digit. No `__`: the separator of exposed names appears once, so
 * `{prefix}__{name}` always splits at its first `__`.
 */
export const GATEWAY_PREFIX = /^(?:[a-z0-9](?:[a-z0-9_-]{0,61}[a-z0-9])?)?$/;
export const MAX_GATEWAY_SERVERS = 50;

export function isGatewayPrefix(prefix: string): boolean {
  return GATEWAY_PREFIX.test(prefix) && !prefix.includes('__');
}

/** A server as a gateway change names it, checked: its id lowercased; prefix null means "the server's slug". */
export interface ServerChoice {
  serverId: string;
  prefix: string | null;
}

/** The checked server list of a gateway change: well-formed ids and prefixes, each server at most once. */
export function validServerChoices(refs: readonly { serverId: string; prefix?: string | undefined }[]): ServerChoice[] {
  const problems: FieldError[] = [];
  if (refs.length > MAX_GATEWAY_SERVERS) problems.push({ field: 'servers', problem: `must hold at most ${MAX_GATEWAY_SERVERS} servers` });
  const seen = new Set<string>();
  const choices = refs.map((ref, index): ServerChoice => {
    const serverId = ref.serverId.toLowerCase();
    if (!UUID.test(serverId)) problems.push({ field: `servers.${index}.serverId`, problem: 'must be an MCP server id' });
    else if (seen.has(serverId)) problems.push({ field: `servers.${index}.serverId`, problem: 'names a server already in the list' });
    seen.add(serverId);
    const prefix = ref.prefix ?? null;
    if (prefix !== null && !isGatewayPrefix(prefix)) {
      problems.push({
        field: `servers.${index}.prefix`,
        problem: 'must be empty or 1 to 63 lowercase letters, digits, hyphens and single underscores, starting and ending with a letter or digit',
      });
    }
    return { serverId, prefix };
  });
  if (problems.length > 0) throw AppError.invalid(`Invalid gateway servers: ${problems.map((p) => p.field).join(', ')}`, problems);
  return choices;
}
