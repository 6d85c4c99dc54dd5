import { readFileSync } from 'node:fs';

/**
 * CPU time of the benchmark's processes from /proc (Linux), so that a run on a machine shared with other work
 * still says what each call costs: wall-clock latency varies with the neighbours, CPU seconds per call much less.
 */

const TICKS_PER_SECOND = 100;

/** CPU seconds the processes (all their threads) have used so far, in user mode and in the kernel (system calls, TCP). */
export function cpuTimes(pids: number | readonly number[]): { user: number; system: number } {
  const total = { user: 0, system: 0 };
  for (const pid of typeof pids === 'number' ? [pids] : pids) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), counted from field 3: utime is 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    total.user += Number(fields[11]) / TICKS_PER_SECOND;
    total.system += Number(fields[12]) / TICKS_PER_SECOND;
  }
  return total;
}

/**
 * Busy CPU seconds of the whole machine so far: user, nice, system, irq and softirq of every core. Besides the
 * benchmark's own processes this counts PostgreSQL, Redis and Kafka, which a closed loop on one machine shares cores with.
 */
export function machineBusySeconds(): number {
  const [user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return (user! + nice! + system! + irq! + softirq!) / TICKS_PER_SECOND;
}

/** User + system CPU seconds the processes have used so far. */
export function cpuSeconds(pids: number | readonly number[]): number {
  const { user, system } = cpuTimes(pids);
  return user + system;
}

/**
 * Waits until the process uses less than `quietShare` of a core over `stepMs` (work a load left behind, such as
 * call records still being stored, is done), at most `maxMs`. Returns how long it waited.
 */
export async function settle(pid: number | readonly number[], options: { quietShare?: number; stepMs?: number; maxMs?: number } = {}): Promise<number> {
  const { quietShare = 0.25, stepMs = 500, maxMs = 30_000 } = options;
  const started = Date.now();
  for (;;) {
    const before = cpuSeconds(pid);
    await new Promise((resolve) => setTimeout(resolve, stepMs));
    if ((cpuSeconds(pid) - before) * 1000 < quietShare * stepMs || Date.now() - started >= maxMs) return Date.now() - started;
  }
}
