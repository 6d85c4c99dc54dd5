import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every depth, so that equal definitions give equal text whatever the key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    // No prototype: a key named `__proto__` (JSON.parse makes it an own key) is then an own key here too, hashed like
    // any other, instead of calling the prototype setter and leaving its subtree out of the fingerprint.
    const sorted = Object.create(null) as Record<string, unknown>;
    for (const key of Object.keys(value).sort()) {
      const child = (value as Record<string, unknown>)[key];
      if (child !== undefined) sorted[key] = sortKeys(child);
    }
    return sorted;
  }
  return value;
}

/** The fingerprint of a canonical definition: hex SHA-256 of its canonical JSON. */
export function fingerprintOf(definition: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(definition)).digest('hex');
}
