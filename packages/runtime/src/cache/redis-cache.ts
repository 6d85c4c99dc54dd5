import { createHash } from 'node:crypto';
import { createClient } from 'redis';
import type { Logger } from '../logging/logger';
import { CacheClosedError, CacheTimeoutError, CacheUnavailableError } from './errors';
import type { Cache, CounterResult, SubscriptionEvents } from './port';
import { RedisSubscriber } from './redis-subscriber';

type RedisClient = ReturnType<typeof createClient>;

export interface RedisCacheOptions {
  url: string;
  keyPrefix: string;
  logger: Logger;
  /** How long a command may wait for its reply; 5 s by default. */
  commandTimeoutMs?: number;
}

/**
 * INCR and, when the key has no expiry yet (it is new), PEXPIRE, in one atomic round trip; returns the count
 * and the milliseconds left in the window. Checking PTTL rather than `count == 1` also repairs a key that
 * somehow lost its expiry, so a counter can never live forever.
 */
const INCREMENT_SCRIPT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;
const INCREMENT_SHA = createHash('sha1').update(INCREMENT_SCRIPT).digest('hex');

/**
 * How long a command may wait for its reply (node-redis's default). node-redis can bound each command itself,
 * but does it with one `AbortSignal.timeout` per command, which on the hot path (the rate limit of every API-key
 * request) cost about a tenth of an edge's CPU per request; one sweep a second over the commands in flight gives the
 * same bound to within a second. As before, the clock starts when a command is issued after the first connection.
 */
const COMMAND_TIMEOUT_MS = 5_000;
const TIMEOUT_SWEEP_MS = 1_000;

/** The commands in flight of one cache; each rejects with CacheTimeoutError once it is `timeoutMs` old. */
class CommandDeadlines {
  private readonly pending = new Set<{ startedAt: number; reject(error: Error): void }>();
  private readonly sweep: NodeJS.Timeout;
  /** A command timed out and none has been answered since: the connection is up but Redis does not answer. */
  private stalled = false;
  /** While stalled, when the one command sent to find out whether Redis answers again was sent (undefined: none). */
  private probeSentAt: number | undefined;

  constructor(
    private readonly timeoutMs: number,
    /** Whether the connection is lost: a command it rejected then failed for that, not for what it asked. */
    private readonly connectionLost: () => boolean,
  ) {
    this.sweep = setInterval(() => this.expire(), Math.min(TIMEOUT_SWEEP_MS, timeoutMs));
    this.sweep.unref();
  }

  /**
   * Lets a command be sent, or refuses it at once while Redis is stalled and another command is already finding out
   * whether it answers again: otherwise every request would wait the whole timeout during a stall, as during an
   * outage before commands failed fast (docs/architecture.md, When a dependency fails).
   */
  admit(): void {
    if (!this.stalled) return;
    if (this.probeSentAt !== undefined) throw new CacheUnavailableError();
    this.probeSentAt = Date.now();
  }

  bound<T>(command: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry = { startedAt: Date.now(), reject };
      this.pending.add(entry);
      command.then(
        (value) => {
          this.pending.delete(entry);
          this.answered();
          resolve(value);
        },
        (error: unknown) => {
          this.pending.delete(entry);
          if (this.connectionLost()) return reject(new CacheUnavailableError());
          this.answered();
          reject(error);
        },
      );
    });
  }

  private answered(): void {
    this.stalled = false;
    this.probeSentAt = undefined;
  }

  stop(): void {
    clearInterval(this.sweep);
  }

  private expire(): void {
    const startedBefore = Date.now() - this.timeoutMs;
    for (const entry of this.pending) {
      // A Set iterates in insertion order, which is start order: the first command still in time ends the sweep.
      if (entry.startedAt > startedBefore) return;
      this.pending.delete(entry);
      this.stalled = true;
      // The probe timed out (not a command sent before it): the next command may find out again.
      if (this.probeSentAt !== undefined && entry.startedAt >= this.probeSentAt) this.probeSentAt = undefined;
      entry.reject(new CacheTimeoutError(this.timeoutMs));
    }
  }
}

/** Never gives up: backs off exponentially to 5 s with jitter, so a Redis restart heals without us. */
function reconnectDelay(retries: number): number {
  return Math.min(2 ** retries * 50, 5_000) + Math.floor(Math.random() * 200);
}

/**
 * The name each connection gives itself (CLIENT SETNAME), so `CLIENT LIST` shows whose and what it is, e.g.
 * `platform:subscriber`. Redis refuses spaces and newlines in names, so anything unusual in the prefix becomes `_`.
 */
export function connectionName(keyPrefix: string, role: 'commands' | 'subscriber'): string {
  return `${keyPrefix.replace(/[^A-Za-z0-9:._-]/g, '_')}${role}`;
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
 * (a connection in subscribe mode cannot run other commands; redis-subscriber.ts). Both reconnect on their own; while
 * the command connection is lost, commands fail at once (CacheUnavailableError); a subscription never waits for Redis.
 */
export function createRedisCache(options: RedisCacheOptions): Cache {
  const { url, keyPrefix } = options;
  const where = describeRedisUrl(url);
  const logger = options.logger.child({ component: 'redis-cache', redis: where });
  const password = safePassword(url);
  let closed = false;

  const commandTimeoutMs = options.commandTimeoutMs ?? COMMAND_TIMEOUT_MS;
  const deadlines = new CommandDeadlines(commandTimeoutMs, () => !client.isReady);
  const client: RedisClient = createClient({
    url,
    name: connectionName(keyPrefix, 'commands'),
    // Commands are bounded by `deadlines` instead (see COMMAND_TIMEOUT_MS); the subscriber inherits this.
    commandOptions: { timeout: 0 },
    socket: { reconnectStrategy: reconnectDelay },
  });
  watchConnection(client, 'commands');
  // Connecting starts now; commands issued meanwhile wait for it, but never past its first failed attempt or the
  // command timeout: node-redis retries for ever, and a process started while Redis is away serves all the same
  // (docs/architecture.md, When a dependency fails). A failure is logged by the 'error' listener.
  let connectedOnce = false;
  let firstAttemptFailed = () => {};
  const firstFailure = new Promise<void>((resolve) => (firstAttemptFailed = resolve));
  client.once('error', () => firstAttemptFailed());
  const ready = client.connect().then(
    () => {
      connectedOnce = true;
    },
    (error: unknown) => {
      if (!closed) logger.error({ error: scrub(error, password) }, 'Redis connection failed for good');
      throw error;
    },
  );
  ready.catch(() => undefined);

  const subscriber = new RedisSubscriber({
    create() {
      const connection = client.duplicate({ name: connectionName(keyPrefix, 'subscriber') });
      watchConnection(connection, 'subscriber');
      return connection;
    },
    keyPrefix,
    logger,
    confirmWithinMs: commandTimeoutMs,
    describe: (error) => scrub(error, password),
  });

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
    if (!connectedOnce) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<void>((resolve) => (timer = setTimeout(resolve, commandTimeoutMs)));
      await Promise.race([ready, firstFailure, timedOut]).finally(() => clearTimeout(timer));
      if (!connectedOnce) throw new CacheUnavailableError();
    }
    // Lost and reconnecting: refuse at once. Commands used to wait in node-redis's offline queue for the command
    // timeout, so during an outage every request that touched the cache (a generation read, a rate limit) took 5 s,
    // and then fell back or failed all the same. A refused command is never run later either.
    if (!client.isReady) throw new CacheUnavailableError();
    deadlines.admit();
    return client;
  }

  return {
    kind: 'redis',

    async increment(key: string, windowMs: number, by = 1): Promise<CounterResult> {
      const redis = await commands();
      const evalOptions = { keys: [keyPrefix + key], arguments: [String(Math.max(1, Math.ceil(windowMs))), String(Math.trunc(by))] };
      let reply: unknown;
      try {
        reply = await deadlines.bound(redis.evalSha(INCREMENT_SHA, evalOptions));
      } catch (error) {
        // First use on this server (or after SCRIPT FLUSH): send the script itself, which also caches it.
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        reply = await deadlines.bound(redis.eval(INCREMENT_SCRIPT, evalOptions));
      }
      const [count, resetInMs] = reply as [number, number];
      return { count: Number(count), resetInMs: Number(resetInMs) };
    },

    async get(key: string): Promise<string | null> {
      const redis = await commands();
      const value = await deadlines.bound(redis.get(keyPrefix + key));
      return value === null ? null : String(value);
    },

    async set(key: string, value: string, ttlMs: number): Promise<void> {
      const redis = await commands();
      await deadlines.bound(redis.set(keyPrefix + key, value, { expiration: { type: 'PX', value: Math.max(1, Math.ceil(ttlMs)) } }));
    },

    async delete(key: string): Promise<void> {
      const redis = await commands();
      await deadlines.bound(redis.del(keyPrefix + key));
    },

    async publish(channel: string, message: string): Promise<void> {
      const redis = await commands();
      await deadlines.bound(redis.publish(keyPrefix + channel, message));
    },

    async subscribe(channel: string, handler: (message: string) => void, events?: SubscriptionEvents): Promise<() => Promise<void>> {
      if (closed) throw new CacheClosedError();
      return subscriber.subscribe(channel, handler, events);
    },

    async ping(): Promise<void> {
      const redis = await commands();
      await deadlines.bound(redis.ping());
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      deadlines.stop();
      const subscriptions = subscriber.close();
      const connections: Array<[RedisClient, Promise<unknown>]> = [[client, ready]];
      if (subscriptions) connections.push([subscriptions.client, subscriptions.connected]);
      await Promise.all(connections.map(([connection, connected]) => shutDown(connection, connected, commandTimeoutMs)));
    },
  };
}

/**
 * Closes gracefully when connected, waiting at most `drainMs` for the replies in flight (a stuck Redis never
 * sends them); a connection still trying to reach Redis has nothing to drain, so drop it.
 */
async function shutDown(connection: RedisClient, connected: Promise<unknown>, drainMs: number): Promise<void> {
  if (connection.isReady) {
    let giveUp: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      connection.close().then(() => true),
      new Promise<false>((resolve) => {
        giveUp = setTimeout(() => resolve(false), drainMs);
      }),
    ]);
    clearTimeout(giveUp);
    if (!drained) connection.destroy();
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
