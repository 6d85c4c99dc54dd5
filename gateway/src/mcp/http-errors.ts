import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorResponse, RPC, type JsonRpcError } from './jsonrpc';

/**
 * A problem with the HTTP request itself (no session, a session that is not this client's, an unsupported
 * protocol version, a body that is not JSON-RPC): answered with an HTTP status and a JSON-RPC error without id, as
 * the Streamable HTTP transport prescribes.
 */
export class McpHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'McpHttpError';
  }

  get body(): JsonRpcError {
    return errorResponse(null, this.code, this.message);
  }

  static sessionRequired(): McpHttpError {
    return new McpHttpError(400, RPC.invalidRequest, 'Bad Request: the Mcp-Session-Id header is required (initialize first)');
  }

  static sessionNotFound(): McpHttpError {
    return new McpHttpError(404, RPC.sessionNotFound, 'Session not found: it ended, expired, or belongs to another client; initialize a new one');
  }
}

/** Reads the raw body up to `limit` bytes (413 beyond). Plain events rather than an async iterator: this is per request. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.resume();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

function tooLarge(limit: number): McpHttpError {
  // The connection closes after the answer, so the rest of an oversized body is not read.
  return new McpHttpError(413, RPC.invalidRequest, `The message is larger than ${limit} bytes`, { connection: 'close' });
}

/** One JSON answer, written in a single call (headers and body leave together). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
