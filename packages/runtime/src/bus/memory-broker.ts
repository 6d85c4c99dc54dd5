import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import type { Logger } from '../logging/logger';
import { MessageNotHandledError } from './errors';
import type { BusMessage, ReceivedMessage } from './port';
import { backoffMs, Wakeup } from './wakeup';
import { eventHandlerConsecutiveFailures } from '../telemetry/metrics';

/** The header carrying an event's id (the outbox's `EVENT_HEADERS.id`). */
const EVENT_ID_HEADER = 'event-id';
/** The most messages a topic no group reads keeps (see MemoryBroker). */
export const MAX_UNREAD_MESSAGES = 10_000;

/** What a member needs to receive messages; `handle` rejects when the message was not handled. */
interface Member {
  topics: ReadonlySet<string>;
  /** Consecutive messages of one topic, at most `maxBatch` of them. */
  handle(messages: ReceivedMessage[]): Promise<void>;
  maxBatch: number;
  closed: boolean;
  inFlight: Promise<unknown> | null;
  logger: Logger;
  /** The group's and topics' logical names (without the bus's prefix), for metrics labelled as the Kafka bus labels them. */
  names: { group: string; topics: ReadonlyMap<string, string> };
}

/** A publish waiting for a group to have handled a topic up to and including `offset`. */
interface Waiter {
  offset: number;
  resolve(): void;
  reject(error: Error): void;
}

interface Group {
  id: string;
  /** Offset of the next message to hand over, per topic: the group's committed position. */
  positions: Map<string, number>;
  members: Member[];
  nextMember: number;
  wake: Wakeup;
  dispatching: Set<string>;
  /** Publishes waiting on this group, per topic. */
  waiters: Map<string, Waiter[]>;
}

/**
 * One topic: a single partition, holding only what some group has yet to handle (with no group yet, everything,
 * for the first to join). Offsets keep counting as the head is trimmed.
 */
interface TopicLog {
  /** The offset of `entries[0]`: everything before it every group has handled. */
  base: number;
  entries: ReceivedMessage[];
  /** Event ids of the messages held, with their offsets: publishing one again waits for it instead. */
  pendingIds: Map<string, number>;
}

export interface RetryBackoff {
  initialMs: number;
  maxMs: number;
}

/** What a delivery came to: handled, rejected by the handler, or not attempted (the member had left). */
type Outcome = 'handled' | 'failed' | 'left';

/**
 * The in-process stand-in for a Kafka cluster, shared by every memory bus in the process (as brokers are
 * shared by Kafka clients). Each topic is one partition; each group has its own position per topic and
 * hands each message to one member (round-robin), one message (or one batch) at a time so order is kept; a
 * rejected handler gets the message (or batch) again after a back-off (at-least-once). Messages every group has
 * handled are dropped (a group without a member counts, holding what it has yet to read), so memory holds the
 * consumers' backlog rather than everything ever published; a group joining from the beginning starts at the
 * earliest message held, as Kafka starts at the earliest retained.
 *
 * Unlike Kafka, this broker forgets everything when the process ends, so a message is not safe once appended: it
 * is safe once handled. `append` therefore resolves only when every group with a member on the topic has handled
 * the messages (for consumers built on `consumeEvents`: stored them, and their effects, in the database). It
 * rejects as soon as one of those groups fails one (its handler rejected; the group keeps retrying it as usual) or
 * loses its last member first, so the outbox relay leaves the rows unsent and publishes them again. A message
 * published again while a group still has it (same `event-id` header and value) is not appended twice: the
 * publish waits for the one already there. Groups without a member (their consumers closed) keep their position and get what
 * they missed when one joins again, but no publish waits for them.
 *
 * A topic no group has ever read keeps only its newest `maxUnread` messages, as Kafka keeps only what its retention
 * allows for a group yet to join: in one process every consumer joins at start, and a topic no service consumes
 * (catalog.v1 and identity.v1 today) otherwise held every message published to it for the life of the process.
 */
export class MemoryBroker {
  private readonly logs = new Map<string, TopicLog>();
  private readonly groups = new Map<string, Group>();

  constructor(private readonly maxUnread = MAX_UNREAD_MESSAGES) {}

  /**
   * Topics here are full names (already prefixed by the bus). Resolves once every group with a member on a
   * message's topic has handled it; rejects with `MessageNotHandledError` when one of them did not.
   */
  append(messages: ReadonlyArray<BusMessage & { logicalTopic: string }>): Promise<void> {
    const last = new Map<string, number>();
    for (const message of messages) {
      const log = this.log(message.topic);
      const eventId = message.headers[EVENT_ID_HEADER];
      let offset = eventId === undefined ? undefined : log.pendingIds.get(eventId);
      if (offset !== undefined && (offset < this.handledBelow(message.topic) || log.entries[offset - log.base]?.value !== message.value)) {
        offset = undefined;
      }
      if (offset === undefined) {
        offset = log.base + log.entries.length;
        log.entries.push({
          topic: message.logicalTopic,
          key: message.key ?? null,
          value: message.value,
          headers: { ...message.headers },
          partition: 0,
          offset: String(offset),
        });
        if (eventId !== undefined) log.pendingIds.set(eventId, offset);
      }
      last.set(message.topic, Math.max(last.get(message.topic) ?? -1, offset));
    }
    for (const topic of last.keys()) this.trimUnread(topic);
    const handled: Promise<void>[] = [];
    for (const [topic, offset] of last) {
      for (const group of this.groups.values()) {
        if (!serves(group, topic) || group.positions.get(topic)! > offset) continue;
        handled.push(new Promise((resolve, reject) => waitersOf(group, topic).push({ offset, resolve, reject })));
      }
    }
    for (const group of this.groups.values()) group.wake.notify();
    return Promise.all(handled).then(() => undefined);
  }

  join(groupId: string, member: Member, fromBeginning: boolean, retry: RetryBackoff): () => Promise<void> {
    let group = this.groups.get(groupId);
    if (!group) {
      group = { id: groupId, positions: new Map(), members: [], nextMember: 0, wake: new Wakeup(), dispatching: new Set(), waiters: new Map() };
      this.groups.set(groupId, group);
    }
    const joined = group;
    joined.members.push(member);
    for (const topic of member.topics) {
      const log = this.log(topic);
      if (!joined.positions.has(topic)) joined.positions.set(topic, fromBeginning ? log.base : log.base + log.entries.length);
      if (!joined.dispatching.has(topic)) {
        joined.dispatching.add(topic);
        // Deliveries run in the root trace context: a consumer continues the trace from message headers only.
        void context.with(ROOT_CONTEXT, () => this.dispatch(joined, topic, retry));
      }
    }
    joined.wake.notify();
    return async () => {
      member.closed = true;
      joined.members = joined.members.filter((m) => m !== member);
      // Nobody left here to handle what publishes wait for: they fail now, and the publisher sends again later.
      for (const topic of member.topics) {
        if (!serves(joined, topic)) rejectWaiters(joined, topic, 'the group has no member left');
      }
      joined.wake.notify();
      await member.inFlight;
    };
  }

  private log(topic: string): TopicLog {
    let log = this.logs.get(topic);
    if (!log) this.logs.set(topic, (log = { base: 0, entries: [], pendingIds: new Map() }));
    return log;
  }

  /** The offset below which every group on the topic has handled it (with no group: nothing is handled). */
  private handledBelow(topic: string): number {
    let below: number | undefined;
    for (const group of this.groups.values()) {
      const position = group.positions.get(topic);
      if (position !== undefined) below = below === undefined ? position : Math.min(below, position);
    }
    return below ?? this.log(topic).base;
  }

  /** A group has handled a topic up to `next`: publishes waiting for that are done. */
  private advance(group: Group, topic: string, next: number): void {
    group.positions.set(topic, next);
    const waiters = group.waiters.get(topic) ?? [];
    const done = waiters.filter((waiter) => waiter.offset < next);
    if (done.length > 0) group.waiters.set(topic, waiters.filter((waiter) => waiter.offset >= next));
    for (const waiter of done) waiter.resolve();

    // What every group has handled is forgotten (a group without a member counts: it resumes where it was).
    this.forgetBelow(this.log(topic), this.handledBelow(topic));
  }

  /** A topic no group reads (none has a position on it) keeps its newest `maxUnread` messages only. */
  private trimUnread(topic: string): void {
    const log = this.log(topic);
    const excess = log.entries.length - this.maxUnread;
    if (excess <= 0) return;
    for (const group of this.groups.values()) if (group.positions.has(topic)) return;
    this.forgetBelow(log, log.base + excess);
  }

  /** Drops the messages before offset `below`. */
  private forgetBelow(log: TopicLog, below: number): void {
    if (below <= log.base) return;
    for (let offset = log.base; offset < below; offset += 1) {
      const eventId = log.entries[offset - log.base]!.headers[EVENT_ID_HEADER];
      if (eventId !== undefined && log.pendingIds.get(eventId) === offset) log.pendingIds.delete(eventId);
    }
    log.entries.splice(0, below - log.base);
    log.base = below;
  }

  /** How many messages of a topic (full name) the broker still holds: those some group has yet to handle. */
  retained(topic: string): number {
    return this.logs.get(topic)?.entries.length ?? 0;
  }

  private async dispatch(group: Group, topic: string, retry: RetryBackoff): Promise<void> {
    const log = this.log(topic);
    let failures = 0;
    for (;;) {
      const position = group.positions.get(topic)!;
      const members = group.members.filter((m) => m.topics.has(topic));
      if (position >= log.base + log.entries.length || members.length === 0) {
        await group.wake.wait();
        continue;
      }
      const member = members[group.nextMember++ % members.length]!;
      const messages = log.entries.slice(position - log.base, position - log.base + member.maxBatch);
      const outcome = await deliver(member, messages);
      const labels = { group: member.names.group, topic: member.names.topics.get(topic) ?? topic, partition: '0' };
      if (outcome === 'handled') {
        this.advance(group, topic, position + messages.length);
        if (failures > 0) eventHandlerConsecutiveFailures.set(labels, 0);
        failures = 0;
      } else if (outcome === 'failed') {
        rejectWaiters(group, topic, 'its handler failed; the group will retry it');
        failures += 1;
        eventHandlerConsecutiveFailures.set(labels, failures);
        await sleep(backoffMs(failures, retry.initialMs, retry.maxMs));
      }
    }
  }
}

/** Whether a live member of the group reads the topic. */
function serves(group: Group, topic: string): boolean {
  return group.positions.has(topic) && group.members.some((member) => !member.closed && member.topics.has(topic));
}

function waitersOf(group: Group, topic: string): Waiter[] {
  let waiters = group.waiters.get(topic);
  if (!waiters) group.waiters.set(topic, (waiters = []));
  return waiters;
}

function rejectWaiters(group: Group, topic: string, reason: string): void {
  const waiters = group.waiters.get(topic);
  if (!waiters || waiters.length === 0) return;
  group.waiters.delete(topic);
  const error = new MessageNotHandledError(group.id, topic, reason);
  for (const waiter of waiters) waiter.reject(error);
}

async function deliver(member: Member, messages: ReceivedMessage[]): Promise<Outcome> {
  if (member.closed) return 'left';
  const message = messages[0]!;
  // Through a promise, so a handler that throws synchronously is treated like one that rejects.
  const attempt = Promise.resolve().then(() => member.handle(messages.map((m) => ({ ...m, headers: { ...m.headers } }))));
  member.inFlight = attempt.catch(() => undefined);
  try {
    await attempt;
    return 'handled';
  } catch (error) {
    member.logger.warn(
      { err: error, topic: message.topic, partition: message.partition, offset: message.offset },
      'event handler failed; the message will be delivered again',
    );
    return 'failed';
  } finally {
    member.inFlight = null;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** One broker per process, like one cluster: every memory bus sees the same topics and groups. */
export const sharedMemoryBroker = new MemoryBroker();
