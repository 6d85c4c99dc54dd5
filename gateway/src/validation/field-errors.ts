import type { z } from 'zod';
import type { FieldError } from '@platform/runtime';

function joinPath(path: readonly PropertyKey[]): string {
  return path.map((segment) => String(segment)).join('.');
}

function problemOf(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && issue.message.endsWith('received undefined')) return 'is required';
  return issue.message.replace(/^Invalid input: /, '');
}

/**
 * Every problem of a failed parse, one entry per field, named by its dotted path (`servers.0.prefix`). Unknown
 * fields are named one by one. `part` names a problem with the whole part (for example a body that is not an
 * object).
 */
export function fieldErrorsOf(error: z.ZodError, part: string): FieldError[] {
  const fields: FieldError[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) fields.push({ field: joinPath([...issue.path, key]), problem: 'unknown field' });
      continue;
    }
    fields.push({ field: joinPath(issue.path) || part, problem: problemOf(issue) });
  }
  return fields;
}
