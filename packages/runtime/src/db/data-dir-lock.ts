import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Raised when another live process has the embedded database's data directory open. */
export class DataDirInUseError extends Error {
  constructor(dataDir: string, pid: number) {
    super(`the embedded database under ${dataDir} is open in process ${pid}; stop that process first (a stale lock: delete ${path.join(dataDir, LOCK_FILE)})`);
    this.name = 'DataDirInUseError';
  }
}

const LOCK_FILE = 'platform.lock';

function holderOf(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Claims a PGlite data directory for this process: PGlite takes no lock of its own, and two processes writing one
 * directory (a command such as `events` or `create-admin` run beside the serving process) corrupt it. A lock left by a
 * process that is gone, or by this process's own earlier instance, is taken over. Returns the release.
 */
export function lockDataDir(dataDir: string): () => void {
  const file = path.join(dataDir, LOCK_FILE);
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => {
        // Only while it is still this process's: after a takeover the lock is another's.
        if (holderOf(file) === process.pid) rmSync(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = holderOf(file);
    if (holder !== undefined && holder !== process.pid && alive(holder)) throw new DataDirInUseError(dataDir, holder);
    rmSync(file, { force: true });
  }
}
