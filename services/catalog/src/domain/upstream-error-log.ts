import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/**
 * What a log line says of the error an exchange with an upstream failed with: its class, the HTTP status the
 * upstream answered if any, and a system error code (`ECONNREFUSED`, `UND_ERR_…`) if any. Never its message, nor
 * the error whole: the SDK and node build messages from the upstream's answer (`Error POSTing to endpoint: ${body}`,
 * a JSON-RPC error's message, the start of malformed JSON), which may echo the credential it was sent, and a logger
 * writes errors with their stacks, causes and properties. A schema error says only how many issues it has.
 */
export function upstreamErrorForLog(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { name: typeof error };
  const chain: unknown[] = [];
  for (let current: unknown = error; current && chain.length < 6; current = (current as { cause?: unknown }).cause) chain.push(current);
  const status = chain.find((e): e is StreamableHTTPError | SseError => e instanceof StreamableHTTPError || e instanceof SseError)?.code;
  const code = chain.map((e) => (e as { code?: unknown }).code).find((value) => typeof value === 'string');
  const issues = (error as { issues?: unknown }).issues;
  return {
    name: error.name,
    ...(typeof status === 'number' ? { status } : {}),
    ...(code !== undefined ? { code } : {}),
    ...(Array.isArray(issues) ? { issues: issues.length } : {}),
  };
}
