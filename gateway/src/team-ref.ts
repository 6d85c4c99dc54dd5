import { z } from 'zod';
import { AppError } from '@platform/runtime';

export type TeamRef = { kind: 'id'; id: string } | { kind: 'slug'; slug: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TEAM_SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * Reads the `{team}` path parameter, which is a team ID (uuid) or a team slug. Anything else names no team
 * that can exist, so it is a 404 rather than a validation error.
 */
export function parseTeamRef(value: string): TeamRef {
  if (UUID.test(value)) return { kind: 'id', id: value.toLowerCase() };
  if (TEAM_SLUG.test(value)) return { kind: 'slug', slug: value };
  throw new AppError('not_found', 'Team not found');
}

/** The schema for a `{team}` path parameter; parse it with `parseTeamRef` in the handler. */
export const teamParam = z.string().meta({ description: 'Team slug or team ID (uuid).', example: 'acme' });
