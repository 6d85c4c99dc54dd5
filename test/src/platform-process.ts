import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/**
 * The platform's executable (`packages/platform/src/main.ts --target=…`) as a process of its own, as in
 * production: nothing is shared with the test's process (module state, event loop). Its output goes to this
 * process's, or its standard output to a pipe for the caller to read (`stdout: 'pipe'`).
 */
export function spawnPlatform(target: string, env: NodeJS.ProcessEnv, nodeArgs: readonly string[] = [], stdout: 'inherit' | 'pipe' = 'inherit'): ChildProcess {
  return spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'packages/platform/src/main.ts', `--target=${target}`], {
    cwd: ROOT,
    env,
    stdio: ['ignore', stdout, 'inherit'],
  });
}

/** Resolves once `readyUrl` answers 200; rejects if one of `children` exits first or after a minute. */
export async function waitReady(readyUrl: string, children: readonly ChildProcess[]): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const exited = children.find((child) => child.exitCode !== null);
    if (exited) throw new Error(`platform process exited with ${exited.exitCode}`);
    try {
      if ((await fetch(readyUrl)).status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`platform did not become ready (${readyUrl})`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Stops a platform process (SIGTERM: it drains and exits) and resolves when it has exited. */
export function stopPlatformProcess(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
