import { AsyncResource } from 'node:async_hooks';

export interface StatementBatcherOptions<TItem> {
  /** The most items one batch (one statement) takes. */
  maxItems: number;
  /** The most batches running at once; an item submitted while they all run waits for the next. */
  concurrency: number;
  /** Items with the same key never share a batch (for a statement that must touch each row once). */
  key?: (item: TItem) => string;
}

interface Waiting<TItem, TResult> {
  item: TItem;
  resolve: (result: TResult) => void;
  reject: (error: unknown) => void;
  /** The submitter's async context (trace, log context): its batch runs in the first item's. */
  scope: AsyncResource;
}

/**
 * Serves many callers' items with one statement per batch, as a group commit does: at most `concurrency`
 * batches run at once, and when one ends the next takes everything that waited meanwhile. Under load a
 * statement serves many requests (one round trip, one executor start-up, one commit); alone, an item waits
 * only for the end of the event loop's current turn. `run` answers each item of a batch, in order.
 */
export class StatementBatcher<TItem, TResult> {
  private readonly waiting: Array<Waiting<TItem, TResult>> = [];
  private running = 0;
  private scheduled = false;

  constructor(
    private readonly run: (items: TItem[]) => Promise<TResult[]>,
    private readonly options: StatementBatcherOptions<TItem>,
  ) {}

  submit(item: TItem): Promise<TResult> {
    return new Promise<TResult>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject, scope: new AsyncResource('StatementBatch') });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running >= this.options.concurrency || this.waiting.length === 0) return;
    this.scheduled = true;
    // After the poll phase: every request read from the sockets in this turn joins the batch.
    setImmediate(() => {
      this.scheduled = false;
      this.start(this.take());
      this.schedule();
    });
  }

  private start(batch: Array<Waiting<TItem, TResult>>): void {
    this.running++;
    const items = batch.map((entry) => entry.item);
    let answered: Promise<TResult[]>;
    try {
      answered = batch[0]!.scope.runInAsyncScope(() => this.run(items));
    } catch (error) {
      // A run that throws before returning its promise fails its batch like one that rejects.
      answered = Promise.reject(error);
    }
    answered
      .then((results) => {
        if (results.length !== batch.length) throw new Error(`a batch of ${batch.length} was answered with ${results.length} results`);
        batch.forEach((entry, index) => entry.resolve(results[index]!));
      })
      .catch((error: unknown) => batch.forEach((entry) => entry.reject(error)))
      .finally(() => {
        this.running--;
        this.schedule();
      });
  }

  /** The oldest waiting items, up to `maxItems`, one per key; the others keep their place. */
  private take(): Array<Waiting<TItem, TResult>> {
    const { maxItems, key } = this.options;
    if (!key) return this.waiting.splice(0, maxItems);
    const taken: Array<Waiting<TItem, TResult>> = [];
    const left: Array<Waiting<TItem, TResult>> = [];
    const keys = new Set<string>();
    for (const entry of this.waiting) {
      const itemKey = key(entry.item);
      if (taken.length < maxItems && !keys.has(itemKey)) {
        keys.add(itemKey);
        taken.push(entry);
      } else {
        left.push(entry);
      }
    }
    this.waiting.splice(0, this.waiting.length, ...left);
    return taken;
  }
}
