import type { ServerResponse } from 'node:http';

/** Token responses and OAuth errors must never be cached (RFC 6749 §5.1, OAuth 2.1 §3.2.3). */
export const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;

/**
 * Sets the status, NO_STORE and then `headers`, without sending them: `res.end()` then still frames the body as
 * express did (`Content-Length`, never chunked), which `writeHead` would not.
 */
export function setNoStoreHead(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  res.statusCode = status;
  for (const [name, value] of Object.entries(NO_STORE)) res.setHeader(name, value);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
}

/**
 * Answers a JSON text that must never be cached, with the headers express's `res.status().set().json()` wrote (so
 * the same answer whether served by express or ahead of it). A HEAD request gets the headers only (node drops the body).
 */
export function sendNoStoreJson(res: ServerResponse, status: number, json: string, headers: Record<string, string> = {}): void {
  setNoStoreHead(res, status, headers);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(json));
  res.end(json);
}
