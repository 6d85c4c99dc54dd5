import type { createClient } from 'redis';
import { withTimeout } from '../lifecycle/timeout';
import { LogThrottle } from '../logging/log-throttle';
import type { Logger } from '../logging/logger';
import { CacheClosedError } from './errors';
import type { SubscriptionEvents } from './port';

type RedisClient = ReturnType<typeof createClient>;

/** How long a SUBSCRIBE that failed (lost with its connection, or refused) waits before it is sent again. */
const RESEND_DELAY_MS = 1_000;

export interface RedisSubscriberOptions {
  /** Creates the subscriber connection, not connected yet: a connection in subscribe mode runs no other command. */
  create(): RedisClient;
  keyPrefix: string;
  logger: Logger;
  /** How long `subscribe` waits for Redis's confirmation while Redis may answer (the command timeout). */
  confirmWithinMs: number;
  /** An error's message as it may be logged (no credentials). */
  describe(error: unknown): string;
}

/** One `subscribe` call's subscription, until it is ended. */
class Subscription {
  /** Redis has confirmed the SUBSCRIBE once: the connection re-subscribes it after every reconnect from then on. */
  confirmed = false;
  private live = false;
  ended = false;
  readonly listener: (message: string) => void;

  constructor(
    readonly channel: string,
    handler: (message: string) => void,
    private readonly events: SubscriptionEvents | undefined,
    logger: Logger,
  ) {
    this.listener = (message) => {
      // A subscription ended before Redis confirmed it (or while its connection was down) stays registered with
      // the connection until Redis confirms the UNSUBSCRIBE sent then: it hears nothing meanwhile.
      if (this.ended) return;
      try {
        handler(message);
      } catch (error) {
        logger.error({ err: error, channel }, 'cache subscription handler failed');
      }
    };
  }

  confirm(connectionReady: boolean): void {
    this.confirmed = true;
    // Confirmed on a connection that failed meanwhile: 'ready' resumes it once re-subscribed.
    if (connectionReady) this.resume();
  }

  /** The connection is ready: a confirmed subscription is live (again); reported once per transition. */
  resume(): void {
    if (!this.confirmed || this.live || this.ended) return;
    this.live = true;
    this.events?.onLive?.();
  }

  interrupt(): void {
    if (!this.live) return;
    this.live = false;
    this.events?.onInterrupted?.();
  }
}

/**
 * The subscriptions of one Redis cache, on one connection of their own created on the first `subscribe`. A
 * subscription is registered at once, whether Redis answers or not, and sent to Redis until Redis confirms it: a
 * process started while Redis is away finishes starting (its start used to wait for the first connection, so during an
 * outage a restarted pod never became ready), and its subscriptions become live when Redis answers. Those that must
 * know whether they could have missed a message learn it through SubscriptionEvents, as after any interruption.
 */
export class RedisSubscriber {
  private connection: { client: RedisClient; connected: Promise<unknown> } | undefined;
  private readonly subscriptions = new Set<Subscription>();
  /** The connection failed and is not ready again yet (a first attempt under way counts as not down). */
  private down = false;
  /** A confirmation did not come within the timeout (Redis accepts connections and does not answer): until one does. */
  private unanswered = false;
  /** `subscribe` calls waiting for a confirmation, to wake when the connection fails instead. */
  private readonly waiting = new Set<() => void>();
  private readonly refusals = new LogThrottle(10_000);
  private closed = false;

  constructor(private readonly options: RedisSubscriberOptions) {}

  /**
   * Resolves once the subscription is registered: after Redis confirmed it (and `onLive` was called) when Redis
   * answers within the command timeout; at once, or when the connection's current attempt fails, when it does not
   * (it becomes live once Redis answers). Rejects only once the cache is closed.
   */
  async subscribe(channel: string, handler: (message: string) => void, events?: SubscriptionEvents): Promise<() => Promise<void>> {
    if (this.closed) throw new CacheClosedError();
    const subscription = new Subscription(channel, handler, events, this.options.logger);
    this.subscriptions.add(subscription);
    await this.confirmedOrUnanswered(this.send(subscription));
    return () => this.end(subscription);
  }

  /** Stops every subscription (each watched one hears it is interrupted); returns the connection to close, if any. */
  close(): { client: RedisClient; connected: Promise<unknown> } | undefined {
    this.closed = true;
    for (const subscription of this.subscriptions) subscription.interrupt();
    this.subscriptions.clear();
    for (const wake of this.waiting) wake();
    return this.connection;
  }

  /** Sends the SUBSCRIBE (queued by the client until its connection is ready); settles with Redis's answer. */
  private send(subscription: Subscription): Promise<void> {
    const client = this.client();
    return client.subscribe(this.options.keyPrefix + subscription.channel, subscription.listener).then(
      () => {
        if (this.closed) return;
        this.unanswered = false;
        if (subscription.ended) this.unsubscribe(client, subscription);
        else subscription.confirm(client.isReady);
      },
      (error: unknown) => {
        if (this.closed || subscription.ended) return;
        // Lost with its connection (sent, never answered) or refused by Redis: the client forgets it either way.
        if (client.isReady) this.refusals.warn(this.options.logger, { channel: subscription.channel, error: this.options.describe(error) }, 'Redis refused a subscription; trying again');
        setTimeout(() => {
          if (!this.closed && !subscription.ended) void this.send(subscription);
        }, RESEND_DELAY_MS).unref();
      },
    );
  }

  private async end(subscription: Subscription): Promise<void> {
    if (subscription.ended) return;
    subscription.ended = true;
    this.subscriptions.delete(subscription);
    // Unconfirmed, Redis knows nothing of it yet: a confirmation still to come unsubscribes it (send).
    if (!subscription.confirmed || this.closed || !this.connection) return;
    const client = this.connection.client;
    const removed = this.unsubscribe(client, subscription);
    // While the connection is down the UNSUBSCRIBE waits for it, and its listener hears nothing meanwhile: no reason
    // to hold the caller (a stop) for it. Otherwise wait as for a command, never past the command timeout.
    if (client.isReady) await this.within(removed, this.options.confirmWithinMs);
  }

  /** Removes only this subscription's listener: the channel stays subscribed while others listen on it. */
  private unsubscribe(client: RedisClient, subscription: Subscription): Promise<void> {
    return client.unsubscribe(this.options.keyPrefix + subscription.channel, subscription.listener).catch(() => {
      // Its listener already hears nothing (ended), and the cache's close ends the connection.
    });
  }

  /**
   * Waits for the first answer to a SUBSCRIBE while Redis may give it soon: never once the connection failed, never
   * past the command timeout, and not at all after a wait ran out until Redis answers one (a Redis that accepts
   * connections and does not answer would otherwise cost a start the timeout once per subscription, in turn).
   */
  private async confirmedOrUnanswered(answered: Promise<void>): Promise<void> {
    if (this.down || this.unanswered) return;
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    this.waiting.add(wake);
    try {
      if (!(await this.within(Promise.race([answered, woken]), this.options.confirmWithinMs))) this.unanswered = true;
    } finally {
      this.waiting.delete(wake);
    }
  }

  /** Whether `settles` settled within `ms`. */
  private within(settles: Promise<void>, ms: number): Promise<boolean> {
    const settled = settles.then(() => true, () => true);
    return withTimeout(settled, ms, () => new Error('not settled in time')).catch(() => false);
  }

  /** The subscriber connection, created (and connecting, retrying for ever) on first use. */
  private client(): RedisClient {
    if (this.connection) return this.connection.client;
    const client = this.options.create();
    this.watch(client);
    const connected = client.connect();
    const created = { client, connected };
    connected.catch(() => {
      // Fails only once destroyed (closed): the reconnect strategy never gives up.
      if (this.connection === created) this.connection = undefined;
    });
    this.connection = created;
    return client;
  }

  /**
   * A failing connection may have lost messages: whatever the cause ('error' also fires for a reply that could not
   * be parsed), its subscriptions count as interrupted until it is ready again. node-redis emits 'ready' after a
   * reconnect only once it has re-subscribed every confirmed channel, so a confirmed subscription is live again then.
   */
  private watch(client: RedisClient): void {
    const failed = () => {
      this.down = true;
      for (const subscription of this.subscriptions) subscription.interrupt();
      for (const wake of this.waiting) wake();
    };
    client.on('error', failed);
    client.on('reconnecting', failed);
    client.on('end', failed);
    client.on('ready', () => {
      this.down = false;
      this.unanswered = false;
      for (const subscription of this.subscriptions) subscription.resume();
    });
  }
}
