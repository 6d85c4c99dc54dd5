import { Wakeup } from '../bus/wakeup';

/**
 * In-process signals, one per schema, that wake that schema's relay right after a transaction writing an
 * event commits, so events go out without waiting for the next poll. Relays in other processes still poll.
 */
const signals = new Map<string, Wakeup>();

export function relaySignal(schema: string): Wakeup {
  let signal = signals.get(schema);
  if (!signal) signals.set(schema, (signal = new Wakeup()));
  return signal;
}

export function nudgeRelay(schema: string): void {
  signals.get(schema)?.notify();
}
