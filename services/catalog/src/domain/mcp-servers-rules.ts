import {
  AddressNotAllowedError,
  AppError,
  assertUrlAllowed,
  isAddressAllowed,
  isAdmittableByAllowedNetworks,
  resolveAllowedAddresses,
  type FieldError,
  type ParsedCidr,
} from '@platform/runtime';
import { GATEWAY_SLUG, UUID } from './gateway-rules';

export const MAX_NAME = 100;
export const MAX_DESCRIPTION = 2000;
export const MAX_URL = 2048;
export const MAX_HEADER_NAME = 100;
export const MAX_AUTH_VALUE = 8192;
export const TRANSPORTS = ['streamable-http', 'sse'] as const;
export const DEFAULT_TRANSPORT = 'streamable-http';
export const DEFAULT_AUTH_HEADER = 'Authorization';
export const DEFAULT_TIMEOUT_SECONDS = 30;
export const MIN_TIMEOUT_SECONDS = 1;
export const MAX_TIMEOUT_SECONDS = 300;
/** Shorter credentials get no hint: 4 characters would give away too much of them. */
export const MIN_LENGTH_FOR_HINT = 12;

/** An HTTP header field name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/**
 * Headers the transport itself sets: a static value would break the MCP Streamable HTTP exchange or the request
 * framing, so they are refused rather than silently overridden.
 */
const RESERVED_HEADERS = new Set([
  'accept',
  'connection',
  'content-length',
  'content-type',
  'host',
  'keep-alive',
  'last-event-id',
  'mcp-protocol-version',
  'mcp-session-id',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * What is wrong with the name of a header a server sends upstream: the team's credential header (`authHeaderName`)
 * and op 16's `headers` alike, so neither can reach the upstream as a header the transport sets.
 */
export function headerNameProblem(name: string): string | undefined {
  if (name.length > MAX_HEADER_NAME || !HEADER_NAME.test(name)) return 'must be an HTTP header name';
  if (RESERVED_HEADERS.has(name.toLowerCase())) return 'is set by the MCP transport and cannot be configured';
  return undefined;
}

/** Visible ASCII, space and tab: RFC 9110's field-value without obs-text. */
const HEADER_VALUE = /^[\t\x20-\x7e]+$/;
/**
 * A header value the upstream request can carry: not empty, visible ASCII, spaces and tabs only. Control characters
 * would split or end the header; characters above U+00FF cannot be sent at all (fetch refuses them, so every
 * discovery, health check and call would fail as if the upstream were unreachable), and U+0080 to U+00FF (obs-text)
 * go out as single bytes each server reads its own way.
 */
export function isHeaderValue(value: string): boolean {
  return HEADER_VALUE.test(value);
}
/** The problem a refused header value reports: it names the rule, never the value. */
export const HEADER_VALUE_RULE = `must be 1 to ${MAX_AUTH_VALUE} visible ASCII characters, spaces or tabs`;

/** The plain, still unsealed fields of a server as the rules see them. */
export interface McpServerDraft {
  slug: string;
  name: string;
  description: string;
  url: string;
  transport: string;
  authHeaderName: string | null;
  authValue: string | null;
  timeoutSeconds: number;
  enabled: boolean;
  sendIdentity: boolean;
  capturePayloads: boolean;
}

/** Checks every field of a draft, throwing one 400 that names each bad field; returns the draft normalised. */
export function validMcpServer(draft: McpServerDraft): McpServerDraft {
  const problems: FieldError[] = [];
  if (!GATEWAY_SLUG.test(draft.slug)) {
    problems.push({ field: 'slug', problem: 'must be 1 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit' });
  } else if (UUID.test(draft.slug)) {
    problems.push({ field: 'slug', problem: 'must not look like a UUID' });
  }
  const name = draft.name.trim();
  if (!name || name.length > MAX_NAME) problems.push({ field: 'name', problem: `must be 1 to ${MAX_NAME} characters` });
  const description = draft.description.trim();
  if (description.length > MAX_DESCRIPTION) problems.push({ field: 'description', problem: `must be at most ${MAX_DESCRIPTION} characters` });
  const url = draft.url.trim();
  const urlProblem = mcpServerUrlProblem(url);
  if (urlProblem) problems.push({ field: 'url', problem: urlProblem });
  if (!(TRANSPORTS as readonly string[]).includes(draft.transport)) problems.push({ field: 'transport', problem: `must be one of ${TRANSPORTS.join(', ')}` });
  const timeout = draft.timeoutSeconds;
  if (!Number.isInteger(timeout) || timeout < MIN_TIMEOUT_SECONDS || timeout > MAX_TIMEOUT_SECONDS) {
    problems.push({ field: 'timeoutSeconds', problem: `must be an integer from ${MIN_TIMEOUT_SECONDS} to ${MAX_TIMEOUT_SECONDS}` });
  }
  let authHeaderName = draft.authHeaderName;
  if (draft.authValue !== null) {
    authHeaderName ||= DEFAULT_AUTH_HEADER;
    if (draft.authValue.length > MAX_AUTH_VALUE || !isHeaderValue(draft.authValue)) {
      problems.push({ field: 'authValue', problem: HEADER_VALUE_RULE });
    }
    const nameProblem = headerNameProblem(authHeaderName);
    if (nameProblem) problems.push({ field: 'authHeaderName', problem: nameProblem });
  } else if (authHeaderName) {
    problems.push({ field: 'authHeaderName', problem: 'needs an authValue' });
  }
  if (problems.length > 0) throw AppError.invalid(`Invalid MCP server: ${problems.map((p) => p.field).join(', ')}`, problems);
  return { ...draft, name, description, url, authHeaderName: draft.authValue === null ? null : authHeaderName };
}

/**
 * What is wrong with a server's URL before the address guard looks at it: its length, or credentials in it
 * (`user:password@`). Those would be shown with the URL and kept in audit entries, and fetch refuses such a URL
 * anyway; a credential goes in a header (authValue, or op 16's headers), which is sealed.
 */
export function mcpServerUrlProblem(url: string): string | undefined {
  if (!url || url.length > MAX_URL) return `must be 1 to ${MAX_URL} characters`;
  if (URL.canParse(url)) {
    const parsed = new URL(url);
    if (parsed.username || parsed.password) return 'must not carry credentials (user:password@): send them in a header instead';
  }
  return undefined;
}

/** What the API may show of a credential: its last 4 characters, when it is long enough to spare them. */
export function hintOf(authValue: string): string {
  return authValue.length >= MIN_LENGTH_FOR_HINT ? authValue.slice(-4) : '';
}

/**
 * The address guard for a server's URL, when it is saved. https to any allowed address; plain http only when
 * every address of the host is an internal one the operator allowed in ALLOWED_INTERNAL_NETWORKS (an MCP server
 * on the cluster's network), never across the internet. 422 `address_not_allowed` otherwise.
 */
export async function assertMcpServerUrlAllowed(url: string, allowedNetworks: readonly ParsedCidr[]): Promise<void> {
  try {
    await assertUrlAllowed(url, allowedNetworks, { allowHttp: true });
  } catch (error) {
    throw withAllowedNetworksHint(error);
  }
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:') return;
  let addresses;
  try {
    addresses = await resolveAllowedAddresses(parsed.hostname, allowedNetworks);
  } catch (error) {
    if (error instanceof AddressNotAllowedError) throw error;
    throw new AddressNotAllowedError('the host could not be resolved');
  }
  // Allowed with no networks given means a public address: those must be reached over https.
  if (addresses.some(({ address }) => isAddressAllowed(address, []).allowed)) {
    throw new AddressNotAllowedError('the scheme must be https unless the host is inside ALLOWED_INTERNAL_NETWORKS');
  }
}

/**
 * A refused internal address (a server on the team's own network, or on the laptop trying the platform out) names
 * the setting that admits it; the metadata service and the like, which nothing admits, do not. The address itself
 * is still never named.
 */
function withAllowedNetworksHint(error: unknown): unknown {
  if (!(error instanceof AddressNotAllowedError) || error.address === undefined || !isAdmittableByAllowedNetworks(error.address)) return error;
  return new AddressNotAllowedError(`${error.reason}; the platform's operator may admit its network with ALLOWED_INTERNAL_NETWORKS`, error.address);
}
