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

export interface Cache {
  readonly kind: 'redis' | 'memory';
  /**
   * Atomically adds 1 to the counter `key` and returns its new value. The first increment of a window starts
   * the window's expiry of `windowMs`; later increments in the window do not extend it.
   */
  increment(key: string, windowMs: number): Promise<CounterResult>;
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
  /** Sends `message` to every subscriber of `channel` in every process sharing this cache. */
  publish(channel: string, message: string): Promise<void>;
  /** Returns a function that ends the subscription. */
  subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
