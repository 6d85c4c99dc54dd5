import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ErrorCode, McpError, PromptSchema, ResourceSchema, ResourceTemplateSchema, ToolSchema, type ClientRequest } from '@modelcontextprotocol/sdk/types.js';
import { AddressNotAllowedError, firstAbortOf, storableJson } from '@platform/runtime';
import { z } from 'zod';
import { fingerprintOf } from './fingerprint';
import { raced } from './upstream-client';
import { upstreamExchange, type DiscoveryTarget } from './upstream-exchange';
import { MAX_DISCOVERY_BYTES } from './upstream-fetch';
import { holdsMoreValuesThan, MAX_VALIDATED_VALUES } from './upstream-messages';

export type CapabilityKind = 'tool' | 'resource' | 'resource_template' | 'prompt';

/** One capability as discovered: what is stored and fingerprinted. */
export interface DiscoveredCapability {
  kind: CapabilityKind;
  name: string;
  title: string;
  description: string;
  /** The canonical definition: only the fields that say what the capability does (never `_meta` or icons). */
  definition: Record<string, unknown>;
  fingerprint: string;
}

/**
 * The fields of each kind that make up its definition (spec: name, title, description, schemas, annotations; for
 * resources the URI and MIME type; for prompts the arguments). A change to any of them changes the fingerprint.
 */
const DEFINITION_FIELDS: Record<CapabilityKind, readonly string[]> = {
  tool: ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'],
  resource: ['name', 'title', 'description', 'uri', 'mimeType', 'annotations'],
  resource_template: ['name', 'title', 'description', 'uriTemplate', 'mimeType', 'annotations'],
  prompt: ['name', 'title', 'description', 'arguments'],
};

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * The stored form of an item of a `.../list` answer. Tools and prompts are known by name; resources by URI and
 * templates by URI template, because their names need not be unique while those are.
 */
export function toDiscovered(kind: CapabilityKind, listed: Record<string, unknown>): DiscoveredCapability {
  // Stored as the database can hold it (no NUL, no lone surrogate), and fingerprinted as stored, so a refresh of the
  // same upstream finds the same fingerprint; one odd character must not make the server undiscoverable.
  const item = storableJson(listed) as Record<string, unknown>;
  const definition: Record<string, unknown> = {};
  for (const field of DEFINITION_FIELDS[kind]) if (item[field] !== undefined) definition[field] = item[field];
  const key = kind === 'resource' ? item.uri : kind === 'resource_template' ? item.uriTemplate : item.name;
  const name = text(key);
  assertNameStorable(kind, name);
  return {
    kind,
    name,
    title: text(item.title) || text((item.annotations as Record<string, unknown> | undefined)?.title),
    description: text(item.description),
    definition,
    fingerprint: fingerprintOf(definition),
  };
}

/**
 * The longest name (tool or prompt name, resource URI, URI template) the catalog takes, in characters (UTF-16 code
 * units, as the data plane counts) and in UTF-8 bytes. The store indexes names (unique per server and kind, and in
 * the list's order), and PostgreSQL refuses an index entry over about 2,700 bytes: past that the refresh failed as a
 * bare error with nothing recorded. 1,024 characters of up to 3 bytes outgrow it, hence the byte bound too. Real
 * names are tens of characters; a URI the data plane matches against templates may be 4,096 (docs/gateway.md).
 */
export const MAX_NAME_CHARS = 1_024;
export const MAX_NAME_BYTES = 2_048;

const NAME_LABELS: Record<CapabilityKind, string> = { tool: 'tool name', resource: 'resource URI', resource_template: 'resource template URI', prompt: 'prompt name' };

/** Refuses (protocol_error) a name the store cannot hold, saying how long it is: never the name itself. */
function assertNameStorable(kind: CapabilityKind, name: string): void {
  const bytes = Buffer.byteLength(name, 'utf8');
  if (name.length <= MAX_NAME_CHARS && bytes <= MAX_NAME_BYTES) return;
  const count = (value: number) => value.toLocaleString('en-US');
  throw refused(`it lists a ${NAME_LABELS[kind]} of ${count(name.length)} characters (${count(bytes)} bytes); the platform takes names of at most ${count(MAX_NAME_CHARS)} characters and ${count(MAX_NAME_BYTES)} bytes`);
}

/** Why discovery failed, as a class safe to store and show: never the upstream's words or a credential. */
export type DiscoveryErrorClass = 'timeout' | 'connection_refused' | 'address_not_allowed' | 'http_error' | 'protocol_error' | 'unreachable';

export class DiscoveryError extends Error {
  /** `refusal`: why the platform refused what the upstream answered, in the platform's words (never the upstream's). */
  constructor(readonly errorClass: DiscoveryErrorClass, cause: unknown, readonly refusal?: string) {
    super(`MCP discovery failed: ${errorClass}`, { cause });
    this.name = 'DiscoveryError';
  }
}

/** Safety stop against an upstream that pages forever. */
const MAX_PAGES = 100;

/**
 * The most capabilities the catalog takes from one server, all kinds together, as listed: far more than a real
 * server offers, and a bound on what one upstream makes the catalog hold, compare at each refresh and list. A
 * discovery listing more fails (protocol_error) and stores nothing.
 */
export const MAX_CAPABILITIES_PER_SERVER = 10_000;

function refused(refusal: string): DiscoveryError {
  return new DiscoveryError('protocol_error', new Error(refusal), refusal);
}

/** Each kind's list method, where its answer holds the items, and the SDK's schema of one item. */
const LISTS: Record<CapabilityKind, { method: ClientRequest['method']; key: string; item: z.ZodType }> = {
  tool: { method: 'tools/list', key: 'tools', item: ToolSchema },
  resource: { method: 'resources/list', key: 'resources', item: ResourceSchema },
  resource_template: { method: 'resources/templates/list', key: 'resourceTemplates', item: ResourceTemplateSchema },
  prompt: { method: 'prompts/list', key: 'prompts', item: PromptSchema },
};

/** A page as the SDK first checks it: only its cursor. Its items are counted, then validated one at a time. */
const PAGE = z.looseObject({ nextCursor: z.string().optional() });

/** One listed item, validated as the SDK's own list method would, once it is known to be small enough. */
function listedItem(kind: CapabilityKind, listed: unknown): DiscoveredCapability {
  if (holdsMoreValuesThan(listed, MAX_VALIDATED_VALUES)) {
    throw refused(`it lists a capability whose definition holds more than ${MAX_VALIDATED_VALUES.toLocaleString('en-US')} JSON values, the most the platform takes in one`);
  }
  const parsed = LISTS[kind].item.safeParse(listed);
  if (!parsed.success) throw new DiscoveryError('protocol_error', parsed.error);
  return toDiscovered(kind, parsed.data as Record<string, unknown>);
}

/**
 * Every page of one kind's list, stopping as soon as it lists more than `room` items (what is left of the server's
 * bound): an upstream over it is not read to its end. A page's items are counted before any is validated, and
 * validated one by one (listedItem): the SDK's list methods validate a whole page at once, at a cost in proportion to
 * its size however many items it holds (docs/catalog.md, How many bytes).
 */
async function allPages(client: Client, kind: CapabilityKind, room: number, options: RequestOptions): Promise<DiscoveredCapability[]> {
  const { method, key } = LISTS[kind];
  const found: DiscoveredCapability[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await client.request({ method, params: cursor ? { cursor } : {} } as ClientRequest, PAGE, options);
    const items: unknown = answer[key];
    if (!Array.isArray(items)) throw new DiscoveryError('protocol_error', new Error(`the ${method} answer holds no ${key} list`));
    if (found.length + items.length > room) throw refused(`it lists more than ${MAX_CAPABILITIES_PER_SERVER.toLocaleString('en-US')} capabilities, the most the platform takes from one server`);
    for (const listed of items) found.push(listedItem(kind, listed));
    if (!answer.nextCursor) return found;
    cursor = answer.nextCursor;
  }
  throw refused(`it lists more than ${MAX_PAGES} pages of one kind of capability`);
}

export function classify(error: unknown): DiscoveryErrorClass {
  if (error instanceof DiscoveryError) return error.errorClass;
  const chain: unknown[] = [];
  for (let current: unknown = error; current && chain.length < 6; current = (current as { cause?: unknown }).cause) chain.push(current);
  if (chain.some((e) => e instanceof AddressNotAllowedError)) return 'address_not_allowed';
  if (chain.some((e) => (e instanceof McpError && e.code === ErrorCode.RequestTimeout) || (e as Error)?.name === 'TimeoutError')) return 'timeout';
  const codes = chain.map((e) => (e as { code?: unknown }).code);
  if (codes.includes('ECONNREFUSED')) return 'connection_refused';
  if (codes.some((code) => code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'ETIMEDOUT')) return 'timeout';
  if (chain.some((e) => e instanceof StreamableHTTPError)) return 'http_error';
  if (chain.some((e) => e instanceof McpError || e instanceof SyntaxError || (e as Error)?.name === 'ZodError')) return 'protocol_error';
  return 'unreachable';
}

/**
 * Connects to an MCP server with the official SDK client and lists everything it advertises (tools, resources,
 * resource templates, prompts), every page. Connecting (initialize and its notification) takes at most the server's
 * timeout, each list request too, and the whole at most until `signal` (shutdown, or the overall deadline); on
 * either, the client is closed, which ends its connections. Throws DiscoveryError with a class on any failure.
 */
export async function discoverCapabilities(target: DiscoveryTarget, signal?: AbortSignal): Promise<DiscoveredCapability[]> {
  const exchange = upstreamExchange(target, 'platform-catalog', signal ? [signal] : []);
  const { timeout, guarded, bounded, client, stop, options } = exchange;
  const discover = async () => {
    const connecting = firstAbortOf([stop, AbortSignal.timeout(timeout)]);
    try {
      await raced(client.connect(bounded.transport, { ...options, signal: connecting.signal }), connecting.signal);
    } finally {
      connecting.release();
    }
    // Connected: the lists may take more, and bound their items themselves (allPages).
    guarded.allowBytes(MAX_DISCOVERY_BYTES);
    bounded.admitAnySize();
    const advertised = client.getServerCapabilities() ?? {};
    const kinds: CapabilityKind[] = [
      ...(advertised.tools ? (['tool'] as const) : []),
      ...(advertised.resources ? (['resource', 'resource_template'] as const) : []),
      ...(advertised.prompts ? (['prompt'] as const) : []),
    ];
    const found: DiscoveredCapability[] = [];
    for (const kind of kinds) found.push(...(await allPages(client, kind, MAX_CAPABILITIES_PER_SERVER - found.length, options)));
    return dedupe(found);
  };
  try {
    return await raced(discover(), stop);
  } catch (error) {
    if (error instanceof DiscoveryError) throw error;
    if (guarded.overflowed.aborted) throw refused((guarded.overflowed.reason as Error).message);
    if (bounded.refused.aborted) throw refused((bounded.refused.reason as Error).message);
    // A deadline (the connection's, or the caller's overall one) is a timeout too; any other abort is the caller stopping.
    throw new DiscoveryError(classify(error), error);
  } finally {
    await exchange.close();
  }
}

/** An upstream listing one name twice: the first wins (the store keys on kind and name). */
function dedupe(found: DiscoveredCapability[]): DiscoveredCapability[] {
  const seen = new Set<string>();
  return found.filter((item) => {
    const key = `${item.kind}\u0000${item.name}`;
    if (!item.name || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
