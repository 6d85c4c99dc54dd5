/**
 * A server's `capabilitiesFingerprint` (docs/catalog.md, Publishing and approvals): one digest of its present
 * capabilities, each as its kind, its identifying name (a resource's uri, a template's uri template) and its current
 * fingerprint (fingerprint.ts), in byte order of kind then name (unique per server). It moves whenever discovery
 * stores a new, redefined or gone capability and never otherwise: approvals, health and refresh times are not in it.
 * Publishing and op 2 take it back so that an approval covers exactly the set the approver saw.
 *
 * An aggregate in SQL, not a hash in the service: the server view computes it inside its one correlated aggregate
 * (store capabilitySummarySql), so lists read no capability rows into the service and make no query per server.
 * `capability` is how the query names the catalog.capabilities rows it aggregates (their server's present ones).
 * Hex SHA-256 of the JSON array of [kind, name, fingerprint] triples; "C" collation keeps the order independent of
 * the database's locale; a server without capabilities digests `[]`.
 */
export function capabilitiesFingerprintSql(capability: string): string {
  return `encode(sha256(convert_to(coalesce(
      json_agg(json_build_array(${capability}.kind, ${capability}.name, ${capability}.fingerprint)
               ORDER BY ${capability}.kind COLLATE "C", ${capability}.name COLLATE "C")::text,
      '[]'), 'UTF8')), 'hex')`;
}
