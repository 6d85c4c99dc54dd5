/**
 * The cache/signal port: rate-limit counters, short-lived values and cross-replica signals. Two adapters
 * implement it: Redis and in-memory. Nothing stored here is the truth; losing it must be harmless.
 */
export interface CounterResult {
  /** The counter's value after this increment. */
  count: number;
  /** Milliseconds until the counter's window ends and it resets. */
  resetInMs: number;
}

/**
 * What a subscriber learns about its subscription besides the messages, for those that must know whether they
 * could have missed one (a process that trusts a value in memory only while every change reaches it).
 */
export interface SubscriptionEvents {
  /**
   * The subscription is confirmed: every message published from now on is delivered, in order, until
   * `onInterrupted`. Called when it is first confirmed (normally before `subscribe` resolves; later if the
   * connection failed meanwhile, or if Redis was unreachable when subscribing) and again after each interruption,
   * once the subscription is confirmed anew. Until the first call, messages may be missed.
   */
  onLive?(): void;
  /** Messages may be lost from now until the next `onLive` (the connection carrying the subscription failed). */
  onInterrupted?(): void;
}

export interface Cache {
  readonly kind: 'redis' | 'memory';
  /**
   * Atomically adds `by` (default 1; a negative value takes back) to the counter `key` and returns its new value.
   * The first increment of a window starts the window's expiry of `windowMs`; later ones do not extend it.
   */
  increment(key: string, windowMs: number, by?: number): Promise<CounterResult>;
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
  /** Sends `message` to every subscriber of `channel` in every process sharing this cache. */
  publish(channel: string, message: string): Promise<void>;
  /**
   * Returns a function that ends the subscription. `events` tells when messages may have been missed. Resolves once
   * the subscription is registered, without waiting for an unreachable cache (a process starts without Redis): it
   * becomes live when the cache answers. Rejects only once the cache is closed.
   */
  subscribe(channel: string, handler: (message: string) => void, events?: SubscriptionEvents): Promise<() => Promise<void>>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
