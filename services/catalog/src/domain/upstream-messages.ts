import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * The most JSON values (objects, arrays, strings, numbers, booleans, nulls, each counted once wherever it sits)
 * the catalog lets the SDK validate in one piece: one message while connecting, one listed capability. The SDK's
 * schemas record an issue for every value that does not fit (about 1 KiB and 10 µs each), so an answer of a million
 * `{}` would cost a GiB and seconds. 10,000 is far more than an `initialize` answer or a capability's definition
 * holds (a large input schema has a few hundred).
 */
export const MAX_VALIDATED_VALUES = 10_000;

/** Whether `value` (as JSON.parse gives it) holds more than `max` values. Stops as soon as it does. */
export function holdsMoreValuesThan(value: unknown, max: number): boolean {
  const pending: unknown[] = [value];
  let count = 1;
  while (pending.length > 0) {
    const next = pending.pop();
    if (next === null || typeof next !== 'object') continue;
    const members: unknown[] = Array.isArray(next) ? next : Object.values(next);
    count += members.length;
    if (count > max) return true;
    for (const member of members) pending.push(member);
  }
  return count > max;
}

export interface BoundedTransport {
  transport: Transport;
  /** Aborted (its reason the platform's words) when the upstream sent a message over the bound. */
  refused: AbortSignal;
  /** Lets messages of any size through from now on (a discovery's lists bound each item themselves). */
  admitAnySize(): void;
}

/**
 * `inner` with every message it receives counted before the SDK sees it: one holding more than
 * MAX_VALIDATED_VALUES is dropped and `refused` aborted, which ends the exchange.
 */
export function valueBoundedTransport(inner: Transport): BoundedTransport {
  const refusal = new AbortController();
  let bounded = true;
  const transport: Transport = {
    start: () => inner.start(),
    send: (message, options) => inner.send(message, options),
    close: () => inner.close(),
    get sessionId() {
      return inner.sessionId;
    },
    setProtocolVersion: (version) => inner.setProtocolVersion?.(version),
  };
  inner.onclose = () => transport.onclose?.();
  inner.onerror = (error) => transport.onerror?.(error);
  inner.onmessage = (message, extra) => {
    if (bounded && holdsMoreValuesThan(message, MAX_VALIDATED_VALUES)) {
      refusal.abort(new Error(`it sent a message of more than ${MAX_VALIDATED_VALUES.toLocaleString('en-US')} JSON values while connecting, the most the platform takes in one`));
      return;
    }
    transport.onmessage?.(message, extra);
  };
  return {
    transport,
    refused: refusal.signal,
    admitAnySize() {
      bounded = false;
    },
  };
}
