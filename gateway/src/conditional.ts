import type { Request } from 'express';
import { AppError } from '@platform/runtime';

/** `"3"`, `W/"3"` or a bare `3`: the revision a client read, as sent back in `If-Match`. */
const IF_MATCH_VALUE = /^(?:(?:W\/)?"(\d{1,15})"|(\d{1,15}))$/;

type HeaderValue = string | string[] | undefined;

function headerValueOf(source: HeaderValue | { req: Request } | Request): HeaderValue {
  if (source === undefined || typeof source === 'string' || Array.isArray(source)) return source;
  const req = 'req' in source && typeof (source as { req: unknown }).req === 'object' ? (source as { req: Request }).req : (source as Request);
  return req.headers['if-match'];
}

/**
 * Parses an `If-Match` value into a revision; `undefined` when absent. A list, `*`, or anything but one
 * (optionally quoted, optionally weak) integer is a 400: updates name exactly the revision they read.
 */
export function parseIfMatch(value: HeaderValue): number | undefined {
  if (value === undefined) return undefined;
  const raw = Array.isArray(value) ? (value.length === 1 ? value[0]! : '') : value;
  const match = IF_MATCH_VALUE.exec(raw.trim());
  if (!match) {
    throw new AppError('invalid_request', 'If-Match must be the revision from the ETag, for example "3"', {
      fields: [{ field: 'If-Match', problem: 'must be a single revision such as "3"' }],
    });
  }
  return Number(match[1] ?? match[2]);
}

/** The revision named by `If-Match`; 428 `precondition_required` when the header is missing. */
export function requireIfMatch(source: HeaderValue | { req: Request } | Request): number {
  const revision = parseIfMatch(headerValueOf(source));
  if (revision === undefined) {
    throw new AppError('precondition_required', 'This update requires an If-Match header with the current revision');
  }
  return revision;
}

/** 412 `precondition_failed` when the client's revision is not the stored one (someone changed it since). */
export function assertRevision(expected: number, current: number): void {
  if (expected !== current) {
    throw new AppError('precondition_failed', 'The resource has changed since it was read; fetch it again and retry');
  }
}

/** One strong entity-tag (RFC 9110 `opaque-tag`): a quoted run of visible characters other than `"`. */
const STRONG_ENTITY_TAG = /^"([\x21\x23-\x7e]+)"$/;

/**
 * Parses an optional `If-Match` that names a capability's fingerprint rather than a revision (capability approvals:
 * the definition the approver saw). Absent or `*` answers `undefined` (no precondition); one strong quoted tag answers
 * its content. A list, a weak tag (`W/"…"`, never equal under If-Match's strong comparison) or an unquoted value is a
 * 400, rather than an approval of whatever is current. Separate from parseIfMatch: revisions are integers.
 */
export function parseIfMatchFingerprint(value: HeaderValue): string | undefined {
  if (value === undefined) return undefined;
  const raw = (Array.isArray(value) ? (value.length === 1 ? value[0]! : '') : value).trim();
  if (raw === '*') return undefined;
  const match = STRONG_ENTITY_TAG.exec(raw);
  if (!match) {
    throw new AppError('invalid_request', 'If-Match must be the capability\'s fingerprint in quotes (its ETag), or *', {
      fields: [{ field: 'If-Match', problem: 'must be a single quoted fingerprint such as "9f86d081…", or *' }],
    });
  }
  return match[1]!;
}

/** The `ETag` value for a revision: a quoted integer. */
export function etagFor(revision: number): string {
  return `"${revision}"`;
}
