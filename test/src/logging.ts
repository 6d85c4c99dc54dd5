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
