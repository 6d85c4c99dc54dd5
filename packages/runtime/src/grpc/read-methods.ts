/**
 * The platform's naming rule for RPCs: `Get…`, `List…` and `Authenticate` only read. Reads are safe to retry
 * (grpc/client.ts) and change nothing that decides authentication (identity's handlers). One rule, so a new
 * method is classified by its name alone.
 */
export function isReadMethod(method: string): boolean {
  return /^(get|list)[A-Z]/.test(method) || method === 'authenticate';
}

/** The read methods of a generated service definition (its keys are the method names). */
export function readMethodsOf(definition: object): string[] {
  return Object.keys(definition).filter(isReadMethod);
}
