/** A FIFO async mutex: `run` executes callers one at a time, in arrival order. */
export class AsyncMutex {
  private tail: Promise<void> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn);
    // The next caller waits for this one to settle either way; its error belongs to its own caller.
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
