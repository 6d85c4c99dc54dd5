import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const MAIN = path.join(ROOT, 'packages/platform/src/main.ts');

export interface CommandRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs one of the executable's commands (`migrate`, `create-admin`, `events`) as an operator does: a process of its
 * own, with PATH and the environment given only, and `stdin` written to it when given.
 */
export function runPlatformCommand(command: string, args: string[], env: NodeJS.ProcessEnv, stdin?: string): Promise<CommandRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, command, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, ...env },
      stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (stdin !== undefined) child.stdin!.end(stdin);
  });
}
