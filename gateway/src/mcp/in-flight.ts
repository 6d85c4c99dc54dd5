import type { Cache } from '@platform/runtime';
import { GatewayRpcError, RPC, type JsonRpcId } from './jsonrpc';

const CHANNEL = 'mcp:cancel';

/** A request this replica is relaying, and how to cancel it. */
export interface InFlight {
  serverId: string;
  cancel(reason: string | undefined): void;
}

/**
 * Requests in flight on this replica, by session and client request id, so that a client's
 * `notifications/cancelled` reaches the exchange it names even when it arrives at another replica (it is then
 * announced to all, and the one holding the request acts).
 */
export class InFlightRequests {
  private readonly entries = new Map<string, InFlight>();
  private unsubscribe: (() => Promise<void>) | undefined;

  constructor(private readonly cache: Cache) {}

  private static key(sessionKey: string, id: JsonRpcId): string {
    return `${sessionKey} ${JSON.stringify(id)}`;
  }

  /** Cancellations are best effort (MCP): one announced while the subscription is not live is lost, and the request runs its course. */
  async listen(): Promise<void> {
    this.unsubscribe = await this.cache.subscribe(CHANNEL, (message) => {
      const { key, reason } = JSON.parse(message) as { key: string; reason?: string };
      this.entries.get(key)?.cancel(reason);
    });
  }

  async close(): Promise<void> {
    await this.unsubscribe?.();
  }

  /**
   * Registers a request about to be relayed. MCP forbids reusing a request id in a session; a request with the id of
   * one in flight here is refused before it leaves: relayed, it took the first one's place at the upstream (the SDK's
   * server sent the first one's answer on the second one's stream, and the first waited for its timeout) and here (a
   * cancellation reached the wrong one). Per replica: one in flight on another replica is not seen.
   */
  add(sessionKey: string, id: JsonRpcId, entry: InFlight): () => void {
    const key = InFlightRequests.key(sessionKey, id);
    if (this.entries.has(key)) {
      throw new GatewayRpcError(RPC.invalidRequest, 'Invalid Request: the request id is already in use by a request in flight in this session', 'error', 'invalid_request');
    }
    this.entries.set(key, entry);
    return () => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    };
  }

  /** Cancels here when the request is here, else asks the other replicas. */
  async cancel(sessionKey: string, id: JsonRpcId, reason: string | undefined): Promise<void> {
    const key = InFlightRequests.key(sessionKey, id);
    const local = this.entries.get(key);
    if (local) local.cancel(reason);
    else await this.cache.publish(CHANNEL, JSON.stringify({ key, ...(reason !== undefined ? { reason } : {}) }));
  }
}
