import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { sliceCodePoints } from '@platform/runtime';

/** How much of a message built from an upstream's answer a log line keeps. */
const MAX_LOGGED_CHARS = 200;

/**
 * What a log line says of the error an exchange with an upstream failed with: its class, the HTTP status the
 * upstream answered if any, a system error code (`ECONNREFUSED`, `UND_ERR_…`) if any, and the start of its message.
 * Never the error whole: the SDK builds messages from the upstream's answer (`Error POSTing to endpoint: ${body}`,
 * up to the byte bound), and a logger writes them with their stacks and causes. A schema error's message lists
 * every issue (built when read), so only their count is kept.
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
    message: Array.isArray(issues) ? `${issues.length} schema issues` : sliceCodePoints(String(error.message), MAX_LOGGED_CHARS),
  };
}
