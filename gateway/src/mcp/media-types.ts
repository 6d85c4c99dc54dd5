import type { IncomingMessage } from 'node:http';
import { McpHttpError } from './http-errors';
import { RPC } from './jsonrpc';

/** What the SDK's clients send on every POST: checked first, without parsing. */
const SDK_ACCEPT = 'application/json, text/event-stream';

/**
 * The media types of a POST (MCP Streamable HTTP): its body must be declared `application/json` (415 otherwise, as
 * the SDK's server answers), and the client must take an answer the gateway can give, JSON or SSE (406 otherwise).
 * MCP has clients accept both, but some real clients and proxies send only one of the two, and are refused by SDK
 * servers that insist on both: the gateway serves them, in the one type they take (answerTypesOf), and refuses only
 * an Accept that takes neither.
 */
export function checkPostMediaTypes(req: IncomingMessage): AnswerTypes {
  const contentType = req.headers['content-type'];
  if (contentType !== 'application/json' && mediaTypeOf(contentType) !== 'application/json') {
    throw new McpHttpError(415, RPC.invalidRequest, 'Unsupported Media Type: the body must be application/json');
  }
  const answers = answerTypesOf(req.headers.accept);
  if (answers === undefined) {
    throw new McpHttpError(406, RPC.invalidRequest, 'Not Acceptable: the client must accept application/json or text/event-stream');
  }
  return answers;
}

/**
 * What a POST's answer may be: `any` (JSON, or an SSE stream when something precedes the answer) for a client that
 * takes both, as MCP asks, or sends no Accept; `json` or `sse` for one that takes only that.
 */
export type AnswerTypes = 'any' | 'json' | 'sse';

/** The answer types an Accept header takes, undefined for neither; the SDK's header costs one comparison. */
function answerTypesOf(accept: string | undefined): AnswerTypes | undefined {
  if (accept === SDK_ACCEPT) return 'any';
  const json = accepts(accept, 'application', 'json');
  const sse = accepts(accept, 'text', 'event-stream');
  if (json) return sse ? 'any' : 'json';
  return sse ? 'sse' : undefined;
}

/** The `type/subtype` of a Content-Type, lower-case and without parameters. */
function mediaTypeOf(header: string | undefined): string | undefined {
  return header?.split(';', 1)[0]!.trim().toLowerCase();
}

/**
 * Whether an Accept header takes `type/subtype`: the most specific range that matches it has a quality above 0
 * (RFC 9110, 12.5.1). No Accept header, or an empty one, takes anything.
 */
function accepts(header: string | undefined, type: string, subtype: string): boolean {
  if (header === undefined || header.trim() === '') return true;
  let specificity = -1;
  let quality = 0;
  for (const range of header.split(',')) {
    const [mediaRange = '', ...parameters] = range.split(';');
    const [rangeType, rangeSubtype] = mediaRange.trim().toLowerCase().split('/');
    const rank = rangeType === '*' && rangeSubtype === '*' ? 0 : rangeType !== type ? -1 : rangeSubtype === '*' ? 1 : rangeSubtype === subtype ? 2 : -1;
    if (rank <= specificity) continue;
    specificity = rank;
    quality = qualityOf(parameters);
  }
  return quality > 0;
}

function qualityOf(parameters: string[]): number {
  for (const parameter of parameters) {
    const [name = '', value = ''] = parameter.split('=');
    if (name.trim().toLowerCase() !== 'q') continue;
    const quality = Number(value.trim());
    return Number.isFinite(quality) ? quality : 1;
  }
  return 1;
}
