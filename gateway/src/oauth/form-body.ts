import type { IncomingMessage } from 'node:http';

/** What an OAuth POST body (or query) holds: each parameter once, or the problem that made it unusable. */
export type OAuthParams = { ok: true; params: Map<string, string> } | { ok: false; problem: string };

/** The largest form body an OAuth endpoint reads (an authorize query is at most 8,000 characters). */
export const FORM_LIMIT_BYTES = 16 * 1024;

/**
 * Parameters of a query string or form body. A parameter sent more than once is refused (RFC 6749 §3.1:
 * "parameters MUST NOT be included more than once"); one sent without a value counts as omitted.
 */
export function parseParams(text: string): OAuthParams {
  const params = new Map<string, string>();
  const seen = new Set<string>();
  for (const [name, value] of new URLSearchParams(text)) {
    if (seen.has(name)) return { ok: false, problem: `The parameter "${truncate(name)}" is repeated` };
    seen.add(name);
    if (value !== '') params.set(name, value);
  }
  return { ok: true, params };
}

/** Reads the body as text up to `limit` bytes; null when it is larger. */
export async function readBodyText(req: IncomingMessage, limit = FORM_LIMIT_BYTES): Promise<string | null> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > limit) {
    req.resume();
    return null;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.resume();
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Whether the request's media type is `type` (parameters such as charset allowed). */
export function hasMediaType(req: IncomingMessage, type: string): boolean {
  const header = req.headers['content-type'];
  if (typeof header !== 'string') return false;
  return header.split(';')[0]!.trim().toLowerCase() === type;
}

/** A form body of an OAuth endpoint: form-encoded, small, each parameter once. */
export async function readForm(req: IncomingMessage): Promise<OAuthParams> {
  if (!hasMediaType(req, 'application/x-www-form-urlencoded')) {
    return { ok: false, problem: 'The body must be application/x-www-form-urlencoded' };
  }
  const text = await readBodyText(req);
  if (text === null) return { ok: false, problem: 'The body is too large' };
  return parseParams(text);
}

function truncate(name: string): string {
  return name.length > 40 ? `${name.slice(0, 40)}…` : name;
}
