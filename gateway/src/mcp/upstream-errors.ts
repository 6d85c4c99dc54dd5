import { AddressNotAllowedError } from '@platform/runtime';
import { GatewayRpcError, RPC } from './jsonrpc';

/** Why talking to an upstream failed, as a JSON-RPC error for the client and a class for the call record. */
export function upstreamFailure(slug: string, error: unknown, timeoutSeconds: number): GatewayRpcError {
  if (error instanceof GatewayRpcError) return error;
  const chain: unknown[] = [];
  for (let current: unknown = error; current && chain.length < 6; current = (current as { cause?: unknown }).cause) chain.push(current);
  // Both: a DOMException's numeric `code` (20 for an abort, 23 for a timeout) says less than its `name`.
  const codes = chain.flatMap((e) => [(e as { code?: unknown }).code, (e as { name?: unknown }).name]);
  if (chain.some((e) => e instanceof AddressNotAllowedError)) {
    return new GatewayRpcError(RPC.upstreamUnavailable, `Upstream server '${slug}' is at an address the gateway may not reach`, 'upstream_unavailable', 'address_not_allowed');
  }
  if (codes.some((c) => c === 'TimeoutError' || c === 'UND_ERR_HEADERS_TIMEOUT' || c === 'UND_ERR_BODY_TIMEOUT' || c === 'UND_ERR_CONNECT_TIMEOUT' || c === 'ETIMEDOUT')) {
    return new GatewayRpcError(RPC.requestTimeout, `Upstream server '${slug}' did not answer within ${timeoutSeconds} s`, 'timeout', 'timeout');
  }
  if (codes.includes('ECONNREFUSED')) {
    return new GatewayRpcError(RPC.upstreamUnavailable, `Upstream server '${slug}' refused the connection`, 'upstream_unavailable', 'connection_refused');
  }
  if (codes.some((c) => c === 'ENOTFOUND' || c === 'EAI_AGAIN' || c === 'ECONNRESET' || c === 'EHOSTUNREACH' || c === 'ENETUNREACH' || c === 'UND_ERR_SOCKET')) {
    return new GatewayRpcError(RPC.upstreamUnavailable, `Upstream server '${slug}' is unreachable`, 'upstream_unavailable', 'unreachable');
  }
  if (codes.includes('AbortError')) {
    return new GatewayRpcError(RPC.upstreamUnavailable, 'The request was cancelled', 'cancelled', 'cancelled');
  }
  return new GatewayRpcError(RPC.upstreamUnavailable, `Upstream server '${slug}' failed`, 'upstream_unavailable', 'unreachable');
}

export function protocolError(slug: string, what: string): GatewayRpcError {
  return new GatewayRpcError(RPC.upstreamProtocolError, `Upstream server '${slug}' answered with ${what}`, 'error', 'protocol_error');
}

export function httpError(slug: string, status: number): GatewayRpcError {
  const signIn = status === 401 || status === 403;
  return new GatewayRpcError(
    RPC.upstreamUnavailable,
    signIn ? `Upstream server '${slug}' refused the gateway's credentials (HTTP ${status})` : `Upstream server '${slug}' answered HTTP ${status}`,
    'upstream_unavailable',
    signIn ? 'upstream_unauthorized' : 'http_error',
  );
}
