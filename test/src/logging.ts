import { Writable } from 'node:stream';
import { createLogger, type Logger } from '@platform/runtime';

export type LogLine = Record<string, unknown> & { msg?: string };

/** A real JSON logger whose lines are kept in memory, so tests can read (and scan) what was logged. */
export function memoryLogger(name = 'test'): { logger: Logger; lines: LogLine[]; text(): string } {
  const lines: LogLine[] = [];
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  return { logger: createLogger({ level: 'debug', name, destination }), lines, text: () => chunks.join('') };
}

/** The lines a test platform's stop leaves when something held it (docs/architecture.md, Stopping). */
const SLOW_STOP_LINE = /"msg":"(module was slow to stop|kafka consumer was slow to disconnect)"/;

/**
 * The logger of a test platform no test listens to: silent but for a slow stop's warnings, written to stderr, so a CI
 * log names the module (and the Kafka consumer) when a platform's stop holds an afterAll for long.
 */
export function slowStopLogger(): Logger {
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (SLOW_STOP_LINE.test(line)) process.stderr.write(`${line}\n`);
      done();
    },
  });
  return createLogger({ level: 'warn', name: 'test-platform', destination });
}
