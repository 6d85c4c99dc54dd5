import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time of the benchmark's processes from /proc (Linux), so that a run on a machine shared with other work
 * still says what each call costs: wall-clock latency varies with the neighbours, CPU seconds per call much less.
 */

const TICKS_PER_SECOND = 100;

/** CPU seconds the process (all its threads) has used so far, in user mode and in the kernel (system calls, TCP). */
export function cpuTimes(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces), counted from field 3: utime is 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) / TICKS_PER_SECOND, system: Number(fields[12]) / TICKS_PER_SECOND };
}

/** User + system CPU seconds the process has used so far. */
export function cpuSeconds(pid: number): number {
  const { user, system } = cpuTimes(pid);
  return user + system;
}

/** The pid of this process's child whose command line contains `needle` (the platform process support.ts starts). */
export function childPid(needle: string): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === process.pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle)) return Number(entry);
    } catch {
      // the process ended meanwhile
    }
  }
  throw new Error(`no child process runs ${needle}`);
}

/**
 * Waits until the process uses less than `quietShare` of a core over `stepMs` (work a load left behind, such as
 * call records still being stored, is done), at most `maxMs`. Returns how long it waited.
 */
export async function settle(pid: number, options: { quietShare?: number; stepMs?: number; maxMs?: number } = {}): Promise<number> {
  const { quietShare = 0.25, stepMs = 500, maxMs = 30_000 } = options;
  const started = Date.now();
  for (;;) {
    const before = cpuSeconds(pid);
    await new Promise((resolve) => setTimeout(resolve, stepMs));
    if ((cpuSeconds(pid) - before) * 1000 < quietShare * stepMs || Date.now() - started >= maxMs) return Date.now() - started;
  }
}
