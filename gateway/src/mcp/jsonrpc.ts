/** JSON-RPC 2.0 as MCP uses it: the message shapes the data plane tells apart, and the errors it answers. */

export type JsonRpcId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcResult {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result: Record<string, unknown>;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcError {
  jsonrpc: '2.0';
  id: JsonRpcId | null;
  error: JsonRpcErrorObject;
}

export type JsonRpcResponse = JsonRpcResult | JsonRpcError;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** Standard codes, and the ones MCP and this gateway use. */
export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** The SDKs' request-timeout code. */
  requestTimeout: -32001,
  /** The session id is unknown, ended or expired (MCP's "Session not found"). */
  sessionNotFound: -32001,
  /** Implementation-defined server errors of the gateway. */
  upstreamUnavailable: -32010,
  upstreamProtocolError: -32011,
  accessDenied: -32012,
} as const;

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
/**
 * MCP: an id is a string or an integer. Integers past 2^53 - 1 are refused too: parsed, they are no longer the number
 * sent, so the answer would carry an id the client never used.
 */
const isId = (value: unknown): value is JsonRpcId => typeof value === 'string' || Number.isSafeInteger(value);

export function isRequest(message: unknown): message is JsonRpcRequest {
  return isObject(message) && message.jsonrpc === '2.0' && typeof message.method === 'string' && isId(message.id) && paramsOk(message);
}

export function isNotification(message: unknown): message is JsonRpcNotification {
  return isObject(message) && message.jsonrpc === '2.0' && typeof message.method === 'string' && !('id' in message) && paramsOk(message);
}

export function isResponse(message: unknown): message is JsonRpcResponse {
  if (!isObject(message) || message.jsonrpc !== '2.0' || 'method' in message) return false;
  if ('result' in message) return isId(message.id) && isObject(message.result);
  if ('error' in message) return (isId(message.id) || message.id === null) && isObject(message.error) && typeof message.error.code === 'number';
  return false;
}

function paramsOk(message: Record<string, unknown>): boolean {
  return message.params === undefined || isObject(message.params);
}

/** The token a request asks to hear its progress under (`_meta.progressToken`); undefined when it names none. */
export function progressTokenOf(request: JsonRpcRequest): unknown {
  return (request.params?._meta as { progressToken?: unknown } | null | undefined)?.progressToken;
}

export function errorResponse(id: JsonRpcId | null, code: number, message: string, data?: unknown): JsonRpcError {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

export function resultResponse(id: JsonRpcId, result: Record<string, unknown>): JsonRpcResult {
  return { jsonrpc: '2.0', id, result };
}

/** A JSON-RPC error the data plane answers a request with; `errorClass` goes to the call record. */
export class GatewayRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly outcome: 'error' | 'refused' | 'timeout' | 'upstream_unavailable' | 'cancelled',
    readonly errorClass: string,
  ) {
    super(message);
    this.name = 'GatewayRpcError';
  }

  toResponse(id: JsonRpcId | null): JsonRpcError {
    return errorResponse(id, this.code, this.message, { errorClass: this.errorClass });
  }
}
