import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { createCallRecorder, type McpCallEvent } from '@platform/gateway';
import { createKafkaBus, createLogger } from '@platform/runtime';
import { machineBusySeconds } from './process-cpu';
import { realInfrastructure, startPlatformProcess } from './support';

/**
 * The MCP call records' way alone, without the data plane around it: the edge's recorder (this process) publishes
 * records at BENCH_RATE per second (default 1,500) to real Kafka, and the platform's services (their own process)
 * consume and store them in real PostgreSQL. Each side's CPU per record is read from /proc over BENCH_SECONDS
 * (default 20) after a warm-up of BENCH_WARMUP_SECONDS (default 20), less what the same seconds cost without
 * records (the load loop itself, and every process's idle work). The gateway benchmark cannot separate these
 * costs from the calls they belong to; this one can, and varies far less between runs.
 */
const RATE = Number(process.env.BENCH_RATE ?? 1500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 20);
const logger = createLogger({ level: 'warn' });

/** CPU seconds of each process so far (NaN for one that has gone: PostgreSQL backends come and go). */
function cpuOf(pids: number[]): Map<number, number> {
  return new Map(
    pids.map((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return [pid, (Number(fields[11]) + Number(fields[12])) / 100];
      } catch {
        return [pid, Number.NaN];
      }
    }),
  );
}

/** CPU seconds spent between two readings by the processes alive at both. */
function spent(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, seconds] of after) {
    const start = before.get(pid);
    if (start !== undefined && Number.isFinite(start) && Number.isFinite(seconds)) total += seconds - start;
  }
  return total;
}

const processesNamed = (name: string) =>
  execFileSync('pgrep', ['-x', name], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);

async function main(): Promise<void> {
  const infrastructure = await realInfrastructure('call-records');
  const platform = await startPlatformProcess(infrastructure.env, { split: true });
  const services = platform.pids.filter((pid) => !readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--target=gateway'));
  const bus = createKafkaBus({ brokers: infrastructure.env.KAFKA_BROKERS!.split(','), clientId: 'bench-edge', topicPrefix: infrastructure.env.KAFKA_TOPIC_PREFIX!, logger });
  const recorder = createCallRecorder({ bus, logger });
  const db = new pg.Client({ connectionString: infrastructure.env.DATABASE_URL });
  await db.connect();
  try {
    // One busy session's calls: the same team, gateway, server, person and client, as through one gateway.
    const shared = {
      teamId: randomUUID(),
      gateway: { id: randomUUID(), slug: 'bench', name: 'Bench gateway' },
      server: { id: randomUUID(), slug: 'echo', name: 'Echo server' },
      clientName: 'bench-client',
    };
    const personId = randomUUID();
    const call = (): McpCallEvent => ({
      ...shared,
      occurredAt: new Date().toISOString(),
      method: 'tools/call',
      exposedName: 'echo_echo',
      principal: { kind: 'user', userId: personId, displayName: 'Bench Person', email: 'bench@example.test', oauthClientName: 'bench client', oauthClientVerified: false },
      outcome: 'ok',
      errorClass: '',
      latencyMs: 3,
      requestBytes: 120,
      responseBytes: 200,
      requestId: randomUUID(),
    });
    const stored = async () => Number((await db.query('SELECT count(*) AS n FROM catalog.call_records')).rows[0].n);
    /** Makes RATE records a second for `seconds` (recording them or not); returns how many. */
    const run = async (seconds: number, record: boolean) => {
      const started = performance.now();
      let made = 0;
      while (performance.now() - started < seconds * 1000) {
        const due = Math.floor(((performance.now() - started) / 1000) * RATE);
        for (; made < due; made += 1) {
          const next = call();
          if (record) recorder.record(next);
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return made;
    };
    const storedAll = async (count: number) => {
      const deadline = Date.now() + 60_000;
      while ((await stored()) < count) {
        if (Date.now() > deadline) throw new Error(`only ${await stored()} of ${count} records stored`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };

    const warmed = await run(WARMUP_SECONDS, true);
    await recorder.flush();
    await storedAll(warmed);

    const broker = processesNamed('java');
    const reading = () => ({
      edge: process.cpuUsage(),
      services: cpuOf(services),
      broker: cpuOf(broker),
      postgres: cpuOf(processesNamed('postgres')),
      machine: machineBusySeconds(),
    });
    type Reading = ReturnType<typeof reading>;
    const costs = (from: Reading, to: Reading) => ({
      edge: (to.edge.user - from.edge.user + to.edge.system - from.edge.system) / 1e6,
      services: spent(from.services, to.services),
      broker: spent(from.broker, to.broker),
      postgres: spent(from.postgres, to.postgres),
      machine: to.machine - from.machine,
    });

    const loaded0 = reading();
    const records = await run(SECONDS, true);
    await recorder.flush();
    await storedAll(warmed + records);
    const loaded = costs(loaded0, reading());
    // The same seconds without records: what the loop and every process's idle work cost anyway.
    const idle0 = reading();
    await run(SECONDS, false);
    const idle = costs(idle0, reading());
    const microseconds = (key: keyof typeof loaded) => (((loaded[key] - idle[key]) * 1e6) / records).toFixed(1);

    console.log(`\n${records} records at ${RATE}/s over ${SECONDS} s, all stored. CPU microseconds per record (less the same seconds without records):\n`);
    console.log('| edge (recorder, producer) | services (consumer, store) | Kafka broker | PostgreSQL | machine |');
    console.log('|---|---|---|---|---|');
    console.log(`| ${microseconds('edge')} | ${microseconds('services')} | ${microseconds('broker')} | ${microseconds('postgres')} | ${microseconds('machine')} |`);
  } finally {
    await bus.close();
    await db.end();
    await platform.stop();
    await infrastructure.cleanup();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
