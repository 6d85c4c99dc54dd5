import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const WARN_ON_SIGUSR2 = path.join(__dirname, 'fixtures/warn-on-sigusr2.mjs');

/** The executable itself: started as `npm start` starts it, stopped by SIGTERM as Kubernetes stops a pod. */
describe('the platform executable', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-signals-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('becomes ready, logs Node\'s process warnings as JSON lines, then on SIGTERM stops its modules in reverse order and exits 0', async () => {
    // Port 0 everywhere: the process says which ports it bound in its 'ready to serve' line (no port chosen in advance
    // can be taken by another process meanwhile).
    const child = spawn(process.execPath, ['--import', 'tsx', 'packages/platform/src/main.ts'], {
      cwd: path.resolve(__dirname, '../../..'),
      env: { ...process.env, NODE_OPTIONS: `--import=${WARN_ON_SIGUSR2}`, DATA_DIR: dataDir, PORT: '0', OPS_PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'debug' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

      const opsPortOf = () => {
        // Whole lines only (stdout and stderr arrive in chunks, mixed), and only the stdout line that parses.
        for (const line of output.slice(0, output.lastIndexOf('\n')).split('\n')) {
          if (!line.includes('"ready to serve"')) continue;
          try {
            return (JSON.parse(line) as { opsPort?: number }).opsPort;
          } catch {
            // not the log line itself
          }
        }
        return undefined;
      };
      const deadline = Date.now() + 60_000;
      let ready = false;
      while (!ready && Date.now() < deadline && child.exitCode === null) {
        const opsPort = opsPortOf();
        ready = opsPort !== undefined && (await fetch(`http://127.0.0.1:${opsPort}/readyz`).then((r) => r.status === 200, () => false));
        if (!ready) await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(ready).toBe(true);

      // A process warning (the fixture emits one on SIGUSR2) is a line of the structured log, not Node's plain text.
      child.kill('SIGUSR2');
      const warned = () => output.split('\n').some((line) => line.startsWith('{') && line.includes('"PLATFORM_TEST_WARNING"') && line.includes('"Node.js process warning"'));
      const warnedBy = Date.now() + 20_000;
      while (!warned() && Date.now() < warnedBy) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(output.split('\n').filter((line) => line.includes('PLATFORM_TEST_WARNING')).map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
        expect.objectContaining({ level: 'warn', msg: 'Node.js process warning', warning: { name: 'Warning', message: 'a warning the test asked for', code: 'PLATFORM_TEST_WARNING' } }),
      ]);

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const lines = output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { msg: string; module?: string });
      expect(lines.some((line) => line.msg.startsWith('shutting down'))).toBe(true);
      expect(lines.at(-1)?.msg).toBe('stopped');
      const stopped = lines.filter((line) => line.msg === 'module stopped').map((line) => line.module);
      // The listener stops first (no new requests), the infrastructure last.
      expect(stopped[0]).toBe('http');
      expect(stopped.indexOf('grpc-server')).toBeLessThan(stopped.indexOf('identity'));
      expect(stopped.indexOf('identity')).toBeLessThan(stopped.indexOf('database'));
    } finally {
      // A failed expectation must not leave the process running (jest would wait for it).
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, 90_000);
});
