import { EventEmitter } from 'node:events';
import type { Logger } from '../logging/logger';
import { CacheClosedError, CacheValueError } from './errors';
import type { Cache, CounterResult, SubscriptionEvents } from './port';

interface Entry {
  value: string;
  /** Epoch milliseconds after which the entry is gone. */
  expiresAt: number;
}

/** Expired entries are dropped when read; the sweep only bounds memory held by keys nobody reads again. */
const SWEEP_INTERVAL_MS = 30_000;

export interface MemoryCacheOptions {
  keyPrefix: string;
  /** Receives errors thrown by subscription handlers; without it they are dropped. */
  logger?: Logger;
}

/**
 * The in-process adapter for `--target=all`. Its state and its signals reach only this instance, so a process
 * must share ONE instance between its modules, just as replicas share one Redis. Counters and values live in
 * one key space, as in Redis.
 */
export function createMemoryCache(options: MemoryCacheOptions): Cache {
  const { keyPrefix, logger } = options;
  const entries = new Map<string, Entry>();
  const signals = new EventEmitter();
  signals.setMaxListeners(0);
  /** Subscribers that asked to know about interruptions: the only one here is the cache closing. */
  const watching = new Set<SubscriptionEvents>();
  let closed = false;

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [key, entry] of entries) if (entry.expiresAt <= now) entries.delete(key);
  }, SWEEP_INTERVAL_MS);
  sweep.unref();

  function assertOpen(): void {
    if (closed) throw new CacheClosedError();
  }

  function live(key: string, now: number): Entry | undefined {
    const entry = entries.get(key);
    if (entry && entry.expiresAt <= now) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  }

  return {
    kind: 'memory',

    async increment(key: string, windowMs: number, by = 1): Promise<CounterResult> {
      assertOpen();
      const now = Date.now();
      const fullKey = keyPrefix + key;
      const entry = live(fullKey, now);
      if (!entry) {
        const expiresAt = now + Math.max(1, Math.ceil(windowMs));
        entries.set(fullKey, { value: String(Math.trunc(by)), expiresAt });
        return { count: Math.trunc(by), resetInMs: expiresAt - now };
      }
      const current = Number(entry.value);
      if (!Number.isSafeInteger(current)) throw new CacheValueError('The value at this key is not an integer counter');
      // Synchronous read-modify-write: nothing can interleave, so the count is exact.
      const count = current + Math.trunc(by);
      entry.value = String(count);
      return { count, resetInMs: entry.expiresAt - now };
    },

    async get(key: string): Promise<string | null> {
      assertOpen();
      return live(keyPrefix + key, Date.now())?.value ?? null;
    },

    async set(key: string, value: string, ttlMs: number): Promise<void> {
      assertOpen();
      entries.set(keyPrefix + key, { value, expiresAt: Date.now() + Math.max(1, Math.ceil(ttlMs)) });
    },

    async delete(key: string): Promise<void> {
      assertOpen();
      entries.delete(keyPrefix + key);
    },

    async publish(channel: string, message: string): Promise<void> {
      assertOpen();
      // Delivered on a later turn, as a network bus would: a handler never runs inside the publisher's call.
      setImmediate(() => signals.emit(keyPrefix + channel, message));
    },

    async subscribe(channel: string, handler: (message: string) => void, events?: SubscriptionEvents): Promise<() => Promise<void>> {
      assertOpen();
      const listener = (message: string) => {
        try {
          handler(message);
        } catch (error) {
          logger?.error({ err: error, channel }, 'cache subscription handler failed');
        }
      };
      signals.on(keyPrefix + channel, listener);
      // In one process nothing can be lost between publisher and subscriber: live at once, until closed.
      if (events) {
        watching.add(events);
        events.onLive?.();
      }
      return async () => {
        signals.off(keyPrefix + channel, listener);
        if (events) watching.delete(events);
      };
    },

    async ping(): Promise<void> {
      assertOpen();
    },

    async close(): Promise<void> {
      closed = true;
      clearInterval(sweep);
      for (const events of watching) events.onInterrupted?.();
      watching.clear();
      signals.removeAllListeners();
      entries.clear();
    },
  };
}
