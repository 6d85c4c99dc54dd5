/**
 * Test helpers for asynchronous delivery. The deadline only bounds a failing test, it asserts nothing on speed: it
 * is generous (as `eventually` in @platform/test) so that a loaded 2-core CI machine never fails a passing test, even
 * for a wait that takes a few seconds anywhere (a stalled subscription is noticed after up to about 2.5 s).
 */
export const WAIT_MS = 20_000;

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function waitFor(condition: () => boolean, what: string, deadlineMs = WAIT_MS): Promise<void> {
  const giveUpAt = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > giveUpAt) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Asks `read` again until `done` holds for its answer, and returns that answer; throws after `deadlineMs`. */
export async function waitUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, deadlineMs = WAIT_MS): Promise<T> {
  const giveUpAt = Date.now() + deadlineMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > giveUpAt) throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(value)}`);
    await sleep(10);
  }
}
