import type { Cache } from '@platform/runtime';
import type { JsonRpcId } from './jsonrpc';

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

  async listen(): Promise<void> {
    this.unsubscribe = await this.cache.subscribe(CHANNEL, (message) => {
      const { key, reason } = JSON.parse(message) as { key: string; reason?: string };
      this.entries.get(key)?.cancel(reason);
    });
  }

  async close(): Promise<void> {
    await this.unsubscribe?.();
  }

  add(sessionKey: string, id: JsonRpcId, entry: InFlight): () => void {
    const key = InFlightRequests.key(sessionKey, id);
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
