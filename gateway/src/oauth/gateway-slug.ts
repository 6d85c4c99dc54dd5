/**
 * A gateway slug as the catalog defines it: 1 to 63 lowercase letters, digits and hyphens, starting and ending
 * with a letter or digit, and never shaped like a UUID (the catalog refuses those). Checked at the edge so a
 * malformed slug is a 404 without any lookup.
 */
const GATEWAY_SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isGatewaySlug(value: unknown): value is string {
  return typeof value === 'string' && GATEWAY_SLUG.test(value) && !UUID.test(value);
}
