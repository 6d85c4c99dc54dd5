import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';

/**
 * Validates nothing. The catalog never calls a tool, so it never checks a tool's output; the SDK's default (Ajv)
 * would compile every listed tool's `outputSchema` at each `tools/list`, a cost the upstream chooses.
 */
const NO_OUTPUT_VALIDATION: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};

/** The SDK client the catalog's discovery and health checks talk to an upstream with. */
export function upstreamClient(name: string): Client {
  return new Client({ name, version: '1.0.0' }, { jsonSchemaValidator: NO_OUTPUT_VALIDATION });
}

/**
 * `work`'s outcome, or a rejection with `stop`'s reason as soon as `stop` aborts, whichever comes first. The SDK
 * bounds requests, not every step of an exchange: `connect` also waits for the POST of `notifications/initialized`
 * (no timeout, and the answer's body is read whole) and, over SSE, for an `endpoint` event; an upstream trickling
 * bytes holds either for ever. The caller closes the client and its connections once this settles.
 */
export function raced<T>(work: Promise<T>, stop: AbortSignal): Promise<T> {
  // The losing side settles later (or never): its rejection is expected, not unhandled.
  work.catch(() => undefined);
  if (stop.aborted) return Promise.reject(stop.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(stop.reason);
    stop.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => stop.removeEventListener('abort', onAbort));
  });
}
