import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AddressNotAllowedError, storableJson, type ParsedCidr } from '@platform/runtime';
import { fingerprintOf } from './fingerprint';
import { guardedFetchFor, MAX_UPSTREAM_BYTES } from './upstream-fetch';

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
  return {
    kind,
    name: text(key),
    title: text(item.title) || text((item.annotations as Record<string, unknown> | undefined)?.title),
    description: text(item.description),
    definition,
    fingerprint: fingerprintOf(definition),
  };
}

/** What discovery needs of a server: where it is, how to talk to it, and its credential already decrypted. */
export interface DiscoveryTarget {
  url: string;
  transport: string;
  /** Static headers (the credential among them), already unsealed. */
  headers: Record<string, string>;
  timeoutSeconds: number;
  allowedNetworks: readonly ParsedCidr[];
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

export function transportFor(target: DiscoveryTarget, fetch: (url: string | URL, init?: RequestInit) => Promise<Response>): Transport {
  const url = new URL(target.url);
  const requestInit: RequestInit = { headers: target.headers };
  if (target.transport === 'sse') return new SSEClientTransport(url, { requestInit, fetch });
  return new StreamableHTTPClientTransport(url, { requestInit, fetch, reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 } });
}

/**
 * Every page of one `.../list` method, stopping as soon as it lists more than `room` items (what is left of the
 * server's bound): an upstream over it is not read to its end.
 */
async function allPages<T>(list: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>, room: number): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await list(cursor);
    items.push(...answer.items);
    if (items.length > room) throw refused(`it lists more than ${MAX_CAPABILITIES_PER_SERVER.toLocaleString('en-US')} capabilities, the most the platform takes from one server`);
    if (!answer.nextCursor) return items;
    cursor = answer.nextCursor;
  }
  throw refused(`it lists more than ${MAX_PAGES} pages of one kind of capability`);
}

export function classify(error: unknown): DiscoveryErrorClass {
  if (error instanceof DiscoveryError) return error.errorClass;
  const chain: unknown[] = [];
  for (let current: unknown = error; current && chain.length < 6; current = (current as { cause?: unknown }).cause) chain.push(current);
  if (chain.some((e) => e instanceof AddressNotAllowedError)) return 'address_not_allowed';
  if (chain.some((e) => e instanceof McpError && e.code === ErrorCode.RequestTimeout)) return 'timeout';
  const codes = chain.map((e) => (e as { code?: unknown }).code);
  if (codes.includes('ECONNREFUSED')) return 'connection_refused';
  if (codes.some((code) => code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'ETIMEDOUT')) return 'timeout';
  if (chain.some((e) => e instanceof StreamableHTTPError)) return 'http_error';
  if (chain.some((e) => e instanceof McpError || e instanceof SyntaxError || (e as Error)?.name === 'ZodError')) return 'protocol_error';
  return 'unreachable';
}

/**
 * Connects to an MCP server with the official SDK client and lists everything it advertises (tools, resources,
 * resource templates, prompts), every page. Throws DiscoveryError with a class on any failure; `signal` stops it
 * (shutdown, or an overall deadline).
 */
export async function discoverCapabilities(target: DiscoveryTarget, signal?: AbortSignal): Promise<DiscoveredCapability[]> {
  const timeout = target.timeoutSeconds * 1000;
  const guarded = guardedFetchFor(target.allowedNetworks, timeout);
  const client = new Client({ name: 'platform-catalog', version: '1.0.0' });
  const stop = signal ? AbortSignal.any([signal, guarded.overflowed]) : guarded.overflowed;
  const options = { timeout, maxTotalTimeout: timeout, signal: stop };
  try {
    await client.connect(transportFor(target, guarded.fetch), options);
    const advertised = client.getServerCapabilities() ?? {};
    const found: DiscoveredCapability[] = [];
    const add = (kind: CapabilityKind, items: object[]) => found.push(...items.map((item) => toDiscovered(kind, item as Record<string, unknown>)));
    const room = () => MAX_CAPABILITIES_PER_SERVER - found.length;
    if (advertised.tools) add('tool', await allPages(async (cursor) => {
      const answer = await client.listTools(cursor ? { cursor } : {}, options);
      return { items: answer.tools, nextCursor: answer.nextCursor };
    }, room()));
    if (advertised.resources) {
      add('resource', await allPages(async (cursor) => {
        const answer = await client.listResources(cursor ? { cursor } : {}, options);
        return { items: answer.resources, nextCursor: answer.nextCursor };
      }, room()));
      add('resource_template', await allPages(async (cursor) => {
        const answer = await client.listResourceTemplates(cursor ? { cursor } : {}, options);
        return { items: answer.resourceTemplates, nextCursor: answer.nextCursor };
      }, room()));
    }
    if (advertised.prompts) add('prompt', await allPages(async (cursor) => {
      const answer = await client.listPrompts(cursor ? { cursor } : {}, options);
      return { items: answer.prompts, nextCursor: answer.nextCursor };
    }, room()));
    return dedupe(found);
  } catch (error) {
    if (error instanceof DiscoveryError) throw error;
    if (guarded.overflowed.aborted) throw refused(`it sent more than ${MAX_UPSTREAM_BYTES / (1024 * 1024)} MiB, the most the platform reads from one server at a time`);
    // An overall deadline (AbortSignal.timeout) is a timeout too; any other abort is the caller stopping.
    throw new DiscoveryError(signal?.aborted && (signal.reason as Error)?.name === 'TimeoutError' ? 'timeout' : classify(error), error);
  } finally {
    await client.close().catch(() => undefined);
    await guarded.close().catch(() => undefined);
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
