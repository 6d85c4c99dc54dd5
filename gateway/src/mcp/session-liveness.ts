import { LogThrottle, type Cache, type Logger } from '@platform/runtime';
import { BoundedMap } from '../bounded-map';

const CHANNEL = 'mcp:session-ended';
const keyOf = (sessionKey: string) => `mcp:session-ended:${sessionKey}`;
const MAX_REMEMBERED = 100_000;

/**
 * Which sessions a client ended (DELETE). A sealed session id stays cryptographically valid, so ending one is
 * recorded in the shared cache for the session's remaining life and announced to every replica. A replica asks the
 * cache once per session it has not seen yet; after that it relies on the announcement, so the hot path costs no
 * cache round trip. Only while its subscription is live, though: before it is (a replica started while Redis was
 * away) or after an interruption an end may be announced unheard, so it asks the cache at every request instead.
 */
export class SessionLiveness {
  /** Ended sessions, until when they could still be presented. */
  private readonly ended = new BoundedMap<string, number>(MAX_REMEMBERED);
  /** Sessions the shared cache said were live (asked once per session), kept only while the subscription is live. */
  private readonly live = new BoundedMap<string, true>(MAX_REMEMBERED);
  /** Every announcement reaches this replica (SubscriptionEvents), since the `subscribed` epoch began. */
  private subscriptionLive = false;
  /** Moves on whenever the subscription goes live: an answer asked before may predate an end announced unheard. */
  private subscribed = 0;
  private readonly endedListeners = new Set<(sessionKey: string) => void>();
  private readonly uncheckedWarnings = new LogThrottle(10_000);
  private unsubscribe: (() => Promise<void>) | undefined;

  constructor(
    private readonly cache: Cache,
    private readonly logger: Logger,
    private readonly maxAgeMs: number,
  ) {}

  async listen(): Promise<void> {
    this.unsubscribe = await this.cache.subscribe(CHANNEL, (sessionKey) => this.markEnded(sessionKey), {
      onLive: () => {
        this.subscribed += 1;
        this.subscriptionLive = true;
      },
      onInterrupted: () => {
        this.subscriptionLive = false;
        this.live.clear();
      },
    });
  }

  async close(): Promise<void> {
    await this.unsubscribe?.();
  }

  /**
   * Hears every session seen to end here: ended on this replica, announced by another, or found ended in the cache
   * (possibly more than once per session). Returns the unsubscriber.
   */
  onEnded(listener: (sessionKey: string) => void): () => void {
    this.endedListeners.add(listener);
    return () => this.endedListeners.delete(listener);
  }

  async isEnded(sessionKey: string): Promise<boolean> {
    const until = this.ended.get(sessionKey);
    if (until !== undefined) {
      if (until > Date.now()) return true;
      this.ended.delete(sessionKey);
    }
    if (this.live.has(sessionKey)) return false;
    const asked = this.subscriptionLive ? this.subscribed : undefined;
    try {
      if ((await this.cache.get(keyOf(sessionKey))) !== null) {
        this.markEnded(sessionKey);
        return true;
      }
    } catch (error) {
      // Without the cache an ended session could be used on a replica that never saw it: refuse nothing, log (now
      // and then: during a Redis outage this is every request of every session new to this replica).
      this.uncheckedWarnings.warn(this.logger, { err: error }, 'could not check whether an MCP session was ended');
      return false;
    }
    // Remembered only when no end can have been announced unheard since the cache was asked.
    if (asked !== undefined && this.subscriptionLive && this.subscribed === asked) this.live.set(sessionKey, true);
    return false;
  }

  async end(sessionKey: string): Promise<void> {
    this.markEnded(sessionKey);
    await this.cache.set(keyOf(sessionKey), '1', this.maxAgeMs);
    await this.cache.publish(CHANNEL, sessionKey);
  }

  private markEnded(sessionKey: string): void {
    this.live.delete(sessionKey);
    this.ended.set(sessionKey, Date.now() + this.maxAgeMs);
    for (const listener of this.endedListeners) {
      try {
        listener(sessionKey);
      } catch (error) {
        this.logger.warn({ err: error }, 'a session end listener failed');
      }
    }
  }
}
