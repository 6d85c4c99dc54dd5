import { AppError, type FieldError } from '@platform/runtime';
import type { McpServerRow } from '../store/mcp-servers-mappers';

/**
 * A stored secret of a server: the team's credential (`authValue`, team route) or the headers a platform admin set
 * (`headers`, op 16).
 */
export type StoredSecret = 'authValue' | 'headers';

/** Whether a URL change reaches another origin (scheme, host and port, as WHATWG `URL.origin` says). */
export function movesOrigin(from: string, to: string): boolean {
  try {
    const before = new URL(from).origin;
    // An opaque origin ("null") equals nothing, not even itself.
    return before === 'null' || before !== new URL(to).origin;
  } catch {
    return true;
  }
}

/**
 * The stored secrets a change would carry to another origin without their being given again. Nobody can read a stored
 * secret back, so a secret is sent only to the origin it was given for: whoever moves the server to another origin
 * gives it again or removes it in the same change. `given` says which secrets the change replaces or removes.
 */
export function secretsLeftBehind(
  stored: Pick<McpServerRow, 'url' | 'auth_value_sealed' | 'headers_sealed'>,
  nextUrl: string,
  given: Record<StoredSecret, boolean>,
): StoredSecret[] {
  if (!movesOrigin(stored.url, nextUrl)) return [];
  const left: StoredSecret[] = [];
  if (stored.auth_value_sealed !== null && !given.authValue) left.push('authValue');
  if (stored.headers_sealed !== null && !given.headers) left.push('headers');
  return left;
}

/**
 * Team route: the team gives its credential again (or "" to remove it) when it moves the server to another origin
 * (400 naming `authValue`); headers a platform admin set cannot be given by the team, so only op 16 moves such a
 * server (403). Neither message carries a value.
 */
export function assertTeamMoveKeepsSecretsHome(stored: McpServerRow, nextUrl: string, authValueGiven: boolean): void {
  const left = secretsLeftBehind(stored, nextUrl, { authValue: authValueGiven, headers: false });
  if (left.includes('headers')) {
    throw AppError.forbidden(
      "A platform admin's headers are sent to this MCP server: only a platform admin may move it to another origin (PATCH /v1/admin/mcp-servers/{id})",
    );
  }
  if (left.includes('authValue')) {
    throw AppError.invalid('Invalid MCP server: authValue', [
      {
        field: 'authValue',
        problem: 'required when url moves to another origin: the stored credential is sent only to the origin it was given for; send it again, or "" to remove it',
      },
    ]);
  }
}

/**
 * Op 16: a platform admin gives the headers again (or `{}`, which also removes the team's credential) when moving a
 * server to another origin (400 naming `headers`). The team's own credential is not the admin's to give: while it is
 * stored the move is refused (400 naming `url`) until the team clears it or moves the server itself with it.
 */
export function assertAdminMoveKeepsSecretsHome(stored: McpServerRow, nextUrl: string, headersGiven: boolean): void {
  // Replacing the headers clears the team's credential too (updateAdminServerRow): then nothing stored goes along.
  const left = secretsLeftBehind(stored, nextUrl, { authValue: headersGiven, headers: headersGiven });
  const problems: FieldError[] = [];
  if (left.includes('authValue')) {
    problems.push({
      field: 'url',
      problem:
        "cannot move to another origin while the team's stored credential is bound to this one: the team clears it first (authValue \"\") or moves the server itself, giving it again",
    });
  }
  if (left.includes('headers')) {
    problems.push({
      field: 'headers',
      problem: 'required when url moves to another origin: the stored headers are sent only to the origin they were given for; send them again, or {} to remove them',
    });
  }
  if (problems.length > 0) throw AppError.invalid(`Invalid MCP server change: ${problems.map((p) => p.field).join(', ')}`, problems);
}
