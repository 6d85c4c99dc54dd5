/**
 * The platform's naming rule for RPCs: `Get…`, `List…`, `Check…`, `Resolve…`, `Validate…` and `Authenticate`
 * only read (at most they note when something was last used). Reads are safe to retry (grpc/client.ts). One
 * rule, so a new method is classified by its name alone.
 */
export function isReadMethod(method: string): boolean {
  return /^(get|list|check|resolve|validate)[A-Z]/.test(method) || method === 'authenticate';
}

/** The read methods of a generated service definition (its keys are the method names). */
export function readMethodsOf(definition: object): string[] {
  return Object.keys(definition).filter(isReadMethod);
}
