import type { JsonRpcMessage } from './jsonrpc';

/**
 * One item of an SSE stream: a parsed message (with its text as received, when known, for relaying it unchanged), or
 * text that was not one (the caller decides what that means).
 */
export type UpstreamStreamItem = { message: JsonRpcMessage; text?: string } | { malformed: string };

/** A message event's data as a stream item: the parsed message with its text, or the text that was not JSON. */
export function streamItemOf(data: string): UpstreamStreamItem {
  try {
    return { message: JSON.parse(data) as JsonRpcMessage, text: data };
  } catch {
    return { malformed: data.slice(0, 200) };
  }
}

/**
 * An upstream's SSE stream of items. A server may end a stream before its last message and let the client resume
 * it (MCP 2025-11-25): `lastEventId` is where a GET with `Last-Event-ID` picks it up, `retryMs` how long the server
 * asked clients to wait first.
 */
export interface UpstreamStream extends AsyncIterable<UpstreamStreamItem> {
  readonly lastEventId?: string;
  readonly retryMs?: number;
}
