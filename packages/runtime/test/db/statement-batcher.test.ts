import { AsyncLocalStorage } from 'node:async_hooks';
import { StatementBatcher } from '../../src/db';

/** A run that records each batch and answers after the test lets it (`release`), doubling each item. */
function controlledRun() {
  const batches: number[][] = [];
  const pending: Array<() => void> = [];
  const run = async (items: number[]): Promise<number[]> => {
    batches.push([...items]);
    await new Promise<void>((resolve) => pending.push(resolve));
    return items.map((item) => item * 2);
  };
  const release = async () => {
    while (pending.length === 0) await new Promise((resolve) => setImmediate(resolve));
    pending.shift()!();
  };
  return { batches, run, release };
}

describe('StatementBatcher', () => {
  it('serves the items submitted in one turn with one run, answering each in order', async () => {
    const { batches, run, release } = controlledRun();
    const batcher = new StatementBatcher(run, { maxItems: 10, concurrency: 2 });
    const answers = Promise.all([1, 2, 3].map((item) => batcher.submit(item)));
    await release();
    expect(await answers).toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('runs at most `concurrency` batches at once; the next takes everything that waited meanwhile', async () => {
    const { batches, run, release } = controlledRun();
    const batcher = new StatementBatcher(run, { maxItems: 10, concurrency: 1 });
    const first = batcher.submit(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1]]);
    const waited = [2, 3, 4].map((item) => batcher.submit(item));
    await new Promise((resolve) => setImmediate(resolve));
    // Still running the first: the others wait.
    expect(batches).toEqual([[1]]);
    await release();
    expect(await first).toBe(2);
    await release();
    expect(await Promise.all(waited)).toEqual([4, 6, 8]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('takes at most maxItems per batch and never two items of one key, keeping the others in order', async () => {
    const batches: string[][] = [];
    const batcher = new StatementBatcher(
      async (items: string[]) => {
        batches.push(items);
        return items.map((item) => item.toUpperCase());
      },
      { maxItems: 3, concurrency: 1, key: (item) => item[0]! },
    );
    const answers = await Promise.all(['a1', 'a2', 'b1', 'c1', 'd1', 'b2'].map((item) => batcher.submit(item)));
    expect(answers).toEqual(['A1', 'A2', 'B1', 'C1', 'D1', 'B2']);
    expect(batches).toEqual([
      ['a1', 'b1', 'c1'],
      ['a2', 'd1', 'b2'],
    ]);
  });

  it('rejects every item of a failed batch and goes on serving later ones', async () => {
    let fail = true;
    const batcher = new StatementBatcher(
      async (items: number[]) => {
        if (fail) throw new Error('deadlock detected');
        return items;
      },
      { maxItems: 10, concurrency: 1 },
    );
    const failed = await Promise.allSettled([batcher.submit(1), batcher.submit(2)]);
    expect(failed.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect((failed[0] as PromiseRejectedResult).reason.message).toBe('deadlock detected');
    fail = false;
    expect(await batcher.submit(3)).toBe(3);
  });

  it('fails the batch of a run that throws before returning its promise', async () => {
    const batcher = new StatementBatcher<number, number>(
      () => {
        throw new Error('no connection');
      },
      { maxItems: 10, concurrency: 1 },
    );
    await expect(batcher.submit(1)).rejects.toThrow('no connection');
  });

  it('rejects a batch answered with the wrong number of results', async () => {
    const batcher = new StatementBatcher(async (items: number[]) => items.slice(1), { maxItems: 10, concurrency: 1 });
    await expect(Promise.all([batcher.submit(1), batcher.submit(2)])).rejects.toThrow('a batch of 2 was answered with 1 results');
  });

  it("runs a batch in its first item's async context (its trace and log context)", async () => {
    const storage = new AsyncLocalStorage<string>();
    const seen: Array<string | undefined> = [];
    const batcher = new StatementBatcher(
      async (items: number[]) => {
        seen.push(storage.getStore());
        return items;
      },
      { maxItems: 10, concurrency: 1 },
    );
    await Promise.all([storage.run('request-a', () => batcher.submit(1)), storage.run('request-b', () => batcher.submit(2))]);
    await storage.run('request-c', () => batcher.submit(3));
    expect(seen).toEqual(['request-a', 'request-c']);
  });
});
