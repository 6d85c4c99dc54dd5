import { randomUUID } from 'node:crypto';
import type { McpCallEvent } from '@platform/gateway';
import { createKafkaBus, createMemoryBus, TOPICS, type EventBus, type Logger, type ReceivedMessage } from '@platform/runtime';
import { deleteKafkaState, infraUrl, uniquePrefix } from '@platform/test';

/**
 * A bus of its own for a recorder test: real Kafka when the env names one (always under CI), else the in-process bus.
 * Closing it deletes its Kafka topics and consumer groups.
 */
export function isolatedBus(logger: Logger): EventBus {
  const kafka = infraUrl('kafka');
  const topicPrefix = uniquePrefix('calls');
  if (!kafka) return createMemoryBus({ topicPrefix, logger });
  const bus = createKafkaBus({ brokers: kafka.split(','), clientId: 'calls-test', topicPrefix, logger });
  return {
    ...bus,
    async close() {
      await bus.close();
      await deleteKafkaState(kafka, topicPrefix);
    },
  };
}

/**
 * The real bus behind a switch: while `down`, `publish` throws (synchronously, as a broken client might) before
 * reaching the bus, the way a broker outage looks to its caller. Fault injection around the real adapter, which
 * still carries every message once the switch is back up.
 */
export function switchableBus(bus: EventBus): { bus: EventBus; down: boolean; attempts: number } {
  const control = {
    down: false,
    attempts: 0,
    bus: {
      kind: bus.kind,
      publish(messages) {
        control.attempts += 1;
        if (control.down) throw new Error('broker unreachable');
        return bus.publish(messages);
      },
      subscribe: (options) => bus.subscribe(options),
      ping: () => bus.ping(),
      close: () => bus.close(),
    } satisfies EventBus,
  };
  return control;
}

/** Every message on `mcp-calls.v1`, as a consumer group of its own receives it. */
export async function collectCalls(bus: EventBus): Promise<{ messages: ReceivedMessage[]; close(): Promise<void> }> {
  const messages: ReceivedMessage[] = [];
  const subscription = await bus.subscribe({
    groupId: `calls-test-${randomUUID()}`,
    topics: [TOPICS.calls],
    fromBeginning: true,
    handler: async (message) => {
      messages.push(message);
    },
  });
  return { messages, close: () => subscription.close() };
}

/** A call as the data plane would report it; `overrides` replace whole fields. */
export function callEvent(teamId: string, overrides: Partial<McpCallEvent> = {}): McpCallEvent {
  return {
    teamId,
    occurredAt: new Date().toISOString(),
    method: 'tools/call',
    exposedName: 'search__web',
    gateway: { id: randomUUID(), slug: 'tools', name: 'Tools' },
    server: { id: randomUUID(), slug: 'search', name: 'Search' },
    principal: { kind: 'user', userId: randomUUID(), displayName: 'Ada', email: 'ada@example.test', oauthClientName: 'Claude', oauthClientVerified: true },
    clientName: 'claude-ai',
    outcome: 'ok',
    errorClass: '',
    latencyMs: 12,
    requestBytes: 120,
    responseBytes: 480,
    requestId: randomUUID(),
    ...overrides,
  };
}
