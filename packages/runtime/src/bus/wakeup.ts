/**
 * A wake-up signal for polling loops: `wait(ms)` resolves on the next `notify()` or after `ms`. A notify that
 * arrives while nobody waits is remembered, so work signalled during a busy iteration is not slept through.
 */
export class Wakeup {
  private waiters: Array<() => void> = [];
  private pending = false;

  notify(): void {
    if (this.waiters.length === 0) {
      this.pending = true;
      return;
    }
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  wait(timeoutMs?: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const wake = () => {
        if (timer) clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== wake);
        resolve();
      };
      if (timeoutMs !== undefined) timer = setTimeout(wake, timeoutMs);
      this.waiters.push(wake);
    });
  }
}

/** Exponential back-off: `initial * 2^(attempt-1)`, capped at `max`. */
export function backoffMs(attempt: number, initial: number, max: number): number {
  return Math.min(max, initial * 2 ** Math.max(0, attempt - 1));
}
