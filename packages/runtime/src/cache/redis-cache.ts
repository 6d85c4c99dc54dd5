import { createHash } from 'node:crypto';
import { createClient } from 'redis';
import type { Logger } from '../logging/logger';
import { CacheClosedError } from './errors';
import type { Cache, CounterResult } from './port';

type RedisClient = ReturnType<typeof createClient>;

export interface RedisCacheOptions {
  url: string;
  keyPrefix: string;
  logger: Logger;
}

/**
 * INCR and, when the key has no expiry yet (it is new), PEXPIRE, in one atomic round trip; returns the count
 * and the milliseconds left in the window. Checking PTTL rather than `count == 1` also repairs a key that
 * somehow lost its expiry, so a counter can never live forever.
 */
const INCREMENT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;
const INCREMENT_SHA = createHash('sha1').update(INCREMENT_SCRIPT).digest('hex');

/** Never gives up: backs off exponentially to 5 s with jitter, so a Redis restart heals without us. */
function reconnectDelay(retries: number): number {
  return Math.min(2 ** retries * 50, 5_000) + Math.floor(Math.random() * 200);
}

/** The URL as it may be logged: scheme, host, port and database; never the credentials. */
export function describeRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return '(unparseable Redis URL)';
  }
}

/**
 * The Redis adapter: one command connection and, created on the first `subscribe`, one subscriber connection
 * (a connection in subscribe mode cannot run other commands). Both reconnect on their own; while Redis is away,
 * commands wait in the client's offline queue.
 */
export function createRedisCache(options: RedisCacheOptions): Cache {
  const { url, keyPrefix } = options;
  const where = describeRedisUrl(url);
  const logger = options.logger.child({ component: 'redis-cache', redis: where });
  const password = safePassword(url);
  let closed = false;

  const client: RedisClient = createClient({ url, socket: { reconnectStrategy: reconnectDelay } });
  watchConnection(client, 'commands');
  // Connecting starts now; commands issued meanwhile wait for it. A failure is logged by the 'error' listener.
  const ready = client.connect().then(
    () => undefined,
    (error: unknown) => {
      if (!closed) logger.error({ error: scrub(error, password) }, 'Redis connection failed for good');
      throw error;
    },
  );
  ready.catch(() => undefined);

  let subscriber: { connection: RedisClient; ready: Promise<RedisClient> } | undefined;

  function watchConnection(connection: RedisClient, role: string): void {
    let lastMessage: string | undefined;
    connection.on('error', (error: unknown) => {
      // The client retries on its own and fires 'error' on every failed attempt; log each distinct problem once.
      const message = scrub(error, password);
      if (message === lastMessage) return;
      lastMessage = message;
      logger.warn({ role, error: message }, 'Redis connection error; reconnecting');
    });
    connection.on('ready', () => {
      if (lastMessage !== undefined) logger.info({ role }, 'Redis connection restored');
      lastMessage = undefined;
    });
  }

  async function commands(): Promise<RedisClient> {
    if (closed) throw new CacheClosedError();
    await ready;
    return client;
  }

  function subscriberConnection(): Promise<RedisClient> {
    if (!subscriber) {
      const connection = client.duplicate();
      watchConnection(connection, 'subscriber');
      const created = { connection, ready: connection.connect().then(() => connection) };
      created.ready.catch(() => {
        if (subscriber === created) subscriber = undefined;
      });
      subscriber = created;
    }
    return subscriber.ready;
  }

  return {
    kind: 'redis',

    async increment(key: string, windowMs: number): Promise<CounterResult> {
      const redis = await commands();
      const evalOptions = { keys: [keyPrefix + key], arguments: [String(Math.max(1, Math.ceil(windowMs)))] };
      let reply: unknown;
      try {
        reply = await redis.evalSha(INCREMENT_SHA, evalOptions);
      } catch (error) {
        // First use on this server (or after SCRIPT FLUSH): send the script itself, which also caches it.
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        reply = await redis.eval(INCREMENT_SCRIPT, evalOptions);
      }
      const [count, resetInMs] = reply as [number, number];
      return { count: Number(count), resetInMs: Number(resetInMs) };
    },

    async get(key: string): Promise<string | null> {
      const redis = await commands();
      const value = await redis.get(keyPrefix + key);
      return value === null ? null : String(value);
    },

    async set(key: string, value: string, ttlMs: number): Promise<void> {
      const redis = await commands();
      await redis.set(keyPrefix + key, value, { expiration: { type: 'PX', value: Math.max(1, Math.ceil(ttlMs)) } });
    },

    async delete(key: string): Promise<void> {
      const redis = await commands();
      await redis.del(keyPrefix + key);
    },

    async publish(channel: string, message: string): Promise<void> {
      const redis = await commands();
      await redis.publish(keyPrefix + channel, message);
    },

    async subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>> {
      if (closed) throw new CacheClosedError();
      const connection = await subscriberConnection();
      const fullChannel = keyPrefix + channel;
      const listener = (message: string) => {
        try {
          handler(message);
        } catch (error) {
          logger.error({ err: error, channel }, 'cache subscription handler failed');
        }
      };
      await connection.subscribe(fullChannel, listener);
      return async () => {
        // Removes only this listener; the channel stays subscribed while others listen on it.
        if (!closed) await connection.unsubscribe(fullChannel, listener);
      };
    },

    async ping(): Promise<void> {
      const redis = await commands();
      await redis.ping();
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      const connections: Array<[RedisClient, Promise<unknown>]> = [[client, ready]];
      if (subscriber) connections.push([subscriber.connection, subscriber.ready]);
      await Promise.all(connections.map(([connection, connected]) => shutDown(connection, connected)));
    },
  };
}

/** Closes gracefully when connected; a connection still trying to reach Redis has nothing to drain, so drop it. */
async function shutDown(connection: RedisClient, connected: Promise<unknown>): Promise<void> {
  if (connection.isReady) {
    await connection.close();
    return;
  }
  connection.destroy();
  // node-redis can finish a connection attempt that was under way when destroy() ran, leaving an open socket
  // that keeps the process alive; destroy it again once that attempt settles.
  connected.then(
    () => connection.destroy(),
    () => undefined,
  );
}

function safePassword(url: string): string | undefined {
  try {
    const password = decodeURIComponent(new URL(url).password);
    return password === '' ? undefined : password;
  } catch {
    return undefined;
  }
}

/** An error's message with the password cut out, in case a driver ever echoes the URL. */
function scrub(error: unknown, password: string | undefined): string {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return password ? message.split(password).join('[redacted]') : message;
}
