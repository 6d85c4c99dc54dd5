import { memoryLogger } from '@platform/test';
import { claimedRounds, DatabaseUnavailableError } from '@platform/runtime';

/**
 * claimedRounds: the background tasks' loop (health checks, scheduled re-discovery, retention). A database outage
 * meets every round and every item of every task, so it is logged at most once a minute per task; other failures
 * are logged each time.
 */
describe('claimedRounds failure logging', () => {
  const outage = () => new DatabaseUnavailableError(new Error('connect ECONNREFUSED 127.0.0.1:5432'));

  it('logs a database outage once however many rounds and items meet it, with the count held back', async () => {
    const log = memoryLogger();
    let due = 0;
    const task = claimedRounds<number>({
      name: 'test.outage',
      logger: log.logger,
      pollMs: 60_000,
      concurrency: 1,
      // Each round: two items whose work fails for the outage, then a claim that fails for it.
      claim: async () => {
        due += 1;
        if (due % 3 === 0) throw outage();
        return due;
      },
      work: async () => {
        throw outage();
      },
    });
    for (let round = 0; round < 5; round++) await expect(task.runRound()).rejects.toBeInstanceOf(DatabaseUnavailableError);
    // The loop's own rounds, whose failed claims it reports.
    task.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await task.stop();
    expect(log.lines).toEqual([
      expect.objectContaining({ level: 'warn', task: 'test.outage', suppressed: 0, msg: expect.stringMatching(/background work failed: the database is unavailable/) }),
    ]);
  });

  it('logs every other failure of an item', async () => {
    const log = memoryLogger();
    let claimed = 0;
    const task = claimedRounds<number>({
      name: 'test.bug',
      logger: log.logger,
      pollMs: 60_000,
      concurrency: 1,
      claim: async () => (++claimed <= 3 ? claimed : null),
      work: async (item) => {
        throw new Error(`item ${item} failed`);
      },
    });
    await expect(task.runRound()).resolves.toBe(3);
    expect(log.lines.map((line) => [line.msg, line.err])).toEqual([
      ['background work failed', 'item 1 failed'],
      ['background work failed', 'item 2 failed'],
      ['background work failed', 'item 3 failed'],
    ]);
  });
});
