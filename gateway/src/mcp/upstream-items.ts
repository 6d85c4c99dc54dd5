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
 * What an item weighs while it waits for its reader, as the memory it holds: its text (V8 keeps a string in one or two
 * bytes per UTF-16 unit) and the message parsed from it (about as large), so twice the text's length, and a little for
 * the item itself so that empty ones count too. An estimate that needs no pass over the text.
 */
export const heldBytesOf = (item: UpstreamStreamItem): number => 64 + 2 * ('message' in item ? (item.text?.length ?? 0) : item.malformed.length);

/**
 * An upstream's SSE stream of items. A server may end a stream before its last message and let the client resume
 * it (MCP 2025-11-25): `lastEventId` is where a GET with `Last-Event-ID` picks it up, `retryMs` how long the server
 * asked clients to wait first.
 */
export interface UpstreamStream extends AsyncIterable<UpstreamStreamItem> {
  readonly lastEventId?: string;
  readonly retryMs?: number;
}
