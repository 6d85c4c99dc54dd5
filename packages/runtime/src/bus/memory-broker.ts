import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import type { Logger } from '../logging/logger';
import type { BusMessage, ReceivedMessage } from './port';
import { backoffMs, Wakeup } from './wakeup';

/** What a member needs to receive messages; `handle` rejects when the message was not handled. */
interface Member {
  topics: ReadonlySet<string>;
  /** Consecutive messages of one topic, at most `maxBatch` of them. */
  handle(messages: ReceivedMessage[]): Promise<void>;
  maxBatch: number;
  closed: boolean;
  inFlight: Promise<unknown> | null;
  logger: Logger;
}

interface Group {
  /** Next message index per topic: the group's committed position. */
  positions: Map<string, number>;
  members: Member[];
  nextMember: number;
  wake: Wakeup;
  dispatching: Set<string>;
}

export interface RetryBackoff {
  initialMs: number;
  maxMs: number;
}

/**
 * The in-process stand-in for a Kafka cluster, shared by every memory bus in the process (as brokers are
 * shared by Kafka clients). Each topic is one append-only partition; each group has its own position per
 * topic and hands each message to one member (round-robin), one message (or one batch) at a time so order is
 * kept; a rejected handler gets the message (or batch) again after a back-off (at-least-once).
 */
export class MemoryBroker {
  private readonly logs = new Map<string, ReceivedMessage[]>();
  private readonly groups = new Map<string, Group>();

  /** Topics and group ids here are full names (already prefixed by the bus). */
  append(messages: ReadonlyArray<BusMessage & { logicalTopic: string }>): void {
    for (const message of messages) {
      const log = this.log(message.topic);
      log.push({
        topic: message.logicalTopic,
        key: message.key ?? null,
        value: message.value,
        headers: { ...message.headers },
        partition: 0,
        offset: String(log.length),
      });
    }
    for (const group of this.groups.values()) group.wake.notify();
  }

  join(groupId: string, member: Member, fromBeginning: boolean, retry: RetryBackoff): () => Promise<void> {
    let group = this.groups.get(groupId);
    if (!group) {
      group = { positions: new Map(), members: [], nextMember: 0, wake: new Wakeup(), dispatching: new Set() };
      this.groups.set(groupId, group);
    }
    const joined = group;
    joined.members.push(member);
    for (const topic of member.topics) {
      if (!joined.positions.has(topic)) joined.positions.set(topic, fromBeginning ? 0 : this.log(topic).length);
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
      joined.wake.notify();
      await member.inFlight;
    };
  }

  private log(topic: string): ReceivedMessage[] {
    let log = this.logs.get(topic);
    if (!log) this.logs.set(topic, (log = []));
    return log;
  }

  private async dispatch(group: Group, topic: string, retry: RetryBackoff): Promise<void> {
    const log = this.log(topic);
    let failures = 0;
    for (;;) {
      const position = group.positions.get(topic)!;
      const members = group.members.filter((m) => m.topics.has(topic));
      if (position >= log.length || members.length === 0) {
        await group.wake.wait();
        continue;
      }
      const member = members[group.nextMember++ % members.length]!;
      const messages = log.slice(position, position + member.maxBatch);
      if (await deliver(member, messages)) {
        group.positions.set(topic, position + messages.length);
        failures = 0;
      } else {
        failures += 1;
        await sleep(backoffMs(failures, retry.initialMs, retry.maxMs));
      }
    }
  }
}

async function deliver(member: Member, messages: ReceivedMessage[]): Promise<boolean> {
  if (member.closed) return false;
  const message = messages[0]!;
  // Through a promise, so a handler that throws synchronously is treated like one that rejects.
  const attempt = Promise.resolve().then(() => member.handle(messages.map((m) => ({ ...m, headers: { ...m.headers } }))));
  member.inFlight = attempt.catch(() => undefined);
  try {
    await attempt;
    return true;
  } catch (error) {
    member.logger.warn(
      { err: error, topic: message.topic, partition: message.partition, offset: message.offset },
      'event handler failed; the message will be delivered again',
    );
    return false;
  } finally {
    member.inFlight = null;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** One broker per process, like one cluster: every memory bus sees the same topics and groups. */
export const sharedMemoryBroker = new MemoryBroker();
