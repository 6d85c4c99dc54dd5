/** Splits a gRPC method path `/platform.identity.v1.IdentityService/GetServiceStatus` into its two names. */
export function splitMethodPath(path: string): { service: string; method: string } {
  const [, service = '', method = ''] = path.split('/');
  return { service, method };
}

/** The fully qualified service name of a generated service definition (all its methods share it). */
export function serviceNameOf(definition: Record<string, { path: string }>): string {
  const first = Object.values(definition)[0];
  if (!first) throw new Error('A gRPC service definition needs at least one method');
  return splitMethodPath(first.path).service;
}
