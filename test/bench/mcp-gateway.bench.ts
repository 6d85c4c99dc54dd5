import { spawn, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { gatewayAccessToken, gatewayUser, publishedMcpServer, setGatewayServers, type TestPlatform } from '../src';
import { closedLoop, McpLoadClient, type LoadSample, type McpTarget } from './mcp-load';
import { cpuSeconds, cpuTimes, machineBusySeconds, settle } from './process-cpu';
import { percentile, realInfrastructure, startPlatformProcess } from './support';

/**
 * The MCP gateway's data plane (issue 5's targets): `tools/call` through `/mcp/{slug}` versus directly to the same
 * upstream, at 1, 16 and 64 concurrent sessions, in one run. Three processes as in production: the platform (every
 * module, real PostgreSQL, Redis, Kafka), the upstream (the SDK's McpServer, test/src/mcp-upstream.ts) and this
 * load generator. Each case gets BENCH_SECONDS (default 10) of measurement, split into BENCH_ROUNDS (default 2)
 * slices that alternate which of direct and gateway goes first; after every slice the platform is left to finish
 * what the load left behind (call records are stored off the request path), so one slice does not slow the next.
 * Besides latency and throughput it reports each process's CPU time per call (from /proc), which a machine shared
 * with other work disturbs far less. Upstream answer modes: `json` (enableJsonResponse, the headline) and `sse` (the
 * SDK's default); BENCH_MODES picks (e.g. `json`). Run: `npm run bench -- mcp-gateway`.
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 1);
const SESSIONS = (process.env.BENCH_SESSIONS ?? '1,16,64').split(',').map(Number);
const MODES = (process.env.BENCH_MODES ?? 'json,sse').split(',') as Mode[];
/** BENCH_FLOOR=1 adds a third side: a bare reverse proxy (bare-proxy-process.ts), the floor of one more hop. */
const FLOOR = process.env.BENCH_FLOOR === '1';
const TEAM = 'bench';

/** Progress on stderr, with seconds since the start (to line up with a profile of the platform). */
const began = performance.now();
const log = (line: string) => process.stderr.write(`[${((performance.now() - began) / 1000).toFixed(1)} s] ${line}\n`);

type Mode = 'json' | 'sse';
type Side = 'direct' | 'gateway' | 'proxy';

interface HelperProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts a script of this folder in its own process and waits for the `{"url": …}` line it prints. */
async function startHelper(script: string, args: string[]): Promise<HelperProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, script), ...args], {
    cwd: path.resolve(__dirname, '../..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<never>((_resolve, reject) => child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`))));
  const firstLine = new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve));
  const { url } = JSON.parse(await Promise.race([firstLine, exited])) as { url: string };
  exited.catch(() => undefined); // its exit at stop() is expected
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * CPU seconds each process spent on one slice. The relay is the process between client and upstream: the platform
 * (for direct calls too, where it only idles), or the bare proxy; the platform's includes what it finished after
 * the window (call records stored), less its idle rate.
 */
interface SliceCpu {
  relay: number;
  /** Of `relay`, the part in the kernel during the window (system calls: sockets). */
  relaySystem: number;
  /** Of `relay`, the part after the window. */
  relayAfter: number;
  upstream: number;
  loadGenerator: number;
  /** Busy time of the whole machine in the window (PostgreSQL, Kafka and Redis included). */
  machine: number;
}

interface Slice extends LoadSample {
  cpu: SliceCpu;
}

interface Case {
  mode: Mode;
  sessions: number;
  slices: Record<Side, Slice[]>;
}

interface Summary {
  p50: number;
  p99: number;
  perSecond: number;
  errors: number;
  /** CPU ms per call. */
  relayMs: number;
  relaySystemMs: number;
  relayAfterMs: number;
  upstreamMs: number;
  loadGeneratorMs: number;
  machineMs: number;
}

function summarise(slices: Slice[]): Summary {
  const latencies = slices.flatMap((slice) => slice.latencies).sort((a, b) => a - b);
  const sum = (value: (slice: Slice) => number) => slices.reduce((total, slice) => total + value(slice), 0);
  const calls = sum((slice) => slice.completed);
  const perCall = (value: (slice: Slice) => number) => (1000 * sum(value)) / calls;
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    perSecond: calls / sum((slice) => slice.seconds),
    errors: sum((slice) => slice.errors),
    relayMs: perCall((slice) => slice.cpu.relay),
    relaySystemMs: perCall((slice) => slice.cpu.relaySystem),
    relayAfterMs: perCall((slice) => slice.cpu.relayAfter),
    upstreamMs: perCall((slice) => slice.cpu.upstream),
    loadGeneratorMs: perCall((slice) => slice.cpu.loadGenerator),
    machineMs: perCall((slice) => slice.cpu.machine),
  };
}

const ms = (value: number) => value.toFixed(2);
const table = (header: string[], rows: string[][]) =>
  `${[`| ${header.join(' | ')} |`, `|${'---|'.repeat(header.length)}`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n')}\n\n`;

function printResults(cases: Case[]): void {
  const summaries = cases.map((c) => ({ ...c, d: summarise(c.slices.direct), g: summarise(c.slices.gateway) }));
  process.stdout.write(
    table(
      ['upstream answers', 'sessions', 'direct p50 ms', 'gateway p50 ms', 'added p50 ms', 'direct p99 ms', 'gateway p99 ms', 'added p99 ms', 'direct calls/s', 'gateway calls/s', 'gateway/direct', 'errors'],
      summaries.map(({ mode, sessions, d, g }) => [
        mode,
        String(sessions),
        ms(d.p50),
        ms(g.p50),
        ms(g.p50 - d.p50),
        ms(d.p99),
        ms(g.p99),
        ms(g.p99 - d.p99),
        String(Math.round(d.perSecond)),
        String(Math.round(g.perSecond)),
        `${Math.round((100 * g.perSecond) / d.perSecond)} %`,
        String(d.errors + g.errors),
      ]),
    ),
  );
  process.stdout.write(
    table(
      ['upstream answers', 'sessions', 'platform CPU ms per gateway call', 'of it in the kernel, in the window', 'of it after the window', 'platform CPU ms per direct call (idle work)', 'upstream CPU ms per call, direct / gateway', 'load generator CPU ms per call, direct / gateway', 'machine CPU ms per call, direct / gateway'],
      summaries.map(({ mode, sessions, d, g }) => [
        mode,
        String(sessions),
        ms(g.relayMs),
        ms(g.relaySystemMs),
        ms(g.relayAfterMs),
        ms(d.relayMs),
        `${ms(d.upstreamMs)} / ${ms(g.upstreamMs)}`,
        `${ms(d.loadGeneratorMs)} / ${ms(g.loadGeneratorMs)}`,
        `${ms(d.machineMs)} / ${ms(g.machineMs)}`,
      ]),
    ),
  );

  if (FLOOR) {
    process.stdout.write(
      table(
        ['upstream answers', 'sessions', 'bare proxy p50 ms', 'added p50 ms', 'bare proxy p99 ms', 'added p99 ms', 'bare proxy calls/s', 'proxy/direct', 'proxy CPU ms per call (kernel)'],
        cases.map(({ mode, sessions, slices }) => {
          const [d, p] = [summarise(slices.direct), summarise(slices.proxy)];
          return [mode, String(sessions), ms(p.p50), ms(p.p50 - d.p50), ms(p.p99), ms(p.p99 - d.p99), String(Math.round(p.perSecond)), `${Math.round((100 * p.perSecond) / d.perSecond)} %`, `${ms(p.relayMs)} (${ms(p.relaySystemMs)})`];
        }),
      ),
    );
  }

  for (const mode of MODES) {
    const one = summaries.find((c) => c.mode === mode && c.sessions === 1);
    const many = summaries.find((c) => c.mode === mode && c.sessions === 64);
    const verdicts: string[] = [];
    if (one) {
      verdicts.push(`added p50 ${ms(one.g.p50 - one.d.p50)} ms (target <= 1): ${one.g.p50 - one.d.p50 <= 1 ? 'met' : 'NOT met'}`);
      verdicts.push(`added p99 ${ms(one.g.p99 - one.d.p99)} ms (target <= 5): ${one.g.p99 - one.d.p99 <= 5 ? 'met' : 'NOT met'}`);
    }
    if (many) {
      const ratio = many.g.perSecond / many.d.perSecond;
      verdicts.push(`throughput at 64 sessions ${Math.round(100 * ratio)} % of direct (target >= 80 %): ${ratio >= 0.8 ? 'met' : 'NOT met'}`);
    }
    process.stdout.write(`- ${mode}: ${verdicts.join('; ')}\n`);
  }
}

/** The exposed name of the gateway's `echo` (the catalog prefixes it with the server's slug). */
async function exposedEcho(target: Omit<McpTarget, 'tool'>): Promise<string> {
  const client = new McpLoadClient({ ...target, tool: '' }, 1);
  try {
    const session = await client.open();
    const listed = await client.request(session, 'tools/list', {});
    await client.close(session);
    const name = (listed.tools as { name: string }[]).map((tool) => tool.name).find((tool) => tool.endsWith('echo'));
    if (!name) throw new Error(`${target.label}: the gateway exposes no echo tool: ${JSON.stringify(listed)}`);
    return name;
  } finally {
    await client.destroy();
  }
}

/** Per answer mode: the upstream, and with BENCH_FLOOR the bare proxy in front of it. */
interface ModeProcesses {
  upstream: HelperProcess;
  proxy?: HelperProcess;
}

/** Person, team, one gateway per upstream (each fronting only that upstream, as direct calls do), tokens. */
async function setUp(platform: TestPlatform, processes: Map<Mode, ModeProcesses>): Promise<Map<Mode, Partial<Record<Side, McpTarget>>>> {
  const user = await gatewayUser(platform, { email: 'mcp-bench@example.test', teamSlug: TEAM, gatewaySlug: `bench-${MODES[0]}` });
  const owner = user.person.client;
  const targets = new Map<Mode, Partial<Record<Side, McpTarget>>>();
  for (const [index, mode] of MODES.entries()) {
    const gatewaySlug = `bench-${mode}`;
    if (index > 0) {
      const created = await owner.post(`/v1/teams/${TEAM}/gateways`, { slug: gatewaySlug, name: `Gateway ${gatewaySlug}` });
      if (created.status !== 201) throw new Error(`create gateway: ${created.status} ${JSON.stringify(created.body)}`);
    }
    const { upstream, proxy } = processes.get(mode)!;
    const serverId = await publishedMcpServer(owner, TEAM, { slug: mode, url: upstream.url });
    await setGatewayServers(owner, TEAM, gatewaySlug, [{ serverId }]);
    const token = await gatewayAccessToken(platform, owner.cookieHeader(), gatewaySlug, 'MCP bench');
    const expected = (text: string) => `${mode}: ${text}`;
    const gateway = { label: `gateway ${mode}`, url: platform.url(`/mcp/${gatewaySlug}`), headers: { authorization: `Bearer ${token}` }, expected };
    targets.set(mode, {
      direct: { label: `direct ${mode}`, url: upstream.url, headers: {}, tool: 'echo', expected },
      gateway: { ...gateway, tool: await exposedEcho(gateway) },
      ...(proxy ? { proxy: { label: `bare proxy ${mode}`, url: proxy.url, headers: {}, tool: 'echo', expected } } : {}),
    });
  }
  return targets;
}

/** One measured slice, with the CPU each process spent on it; returns once the relay is quiet again. */
async function runSlice(target: McpTarget, sessions: number, pids: { relay: number | number[]; upstream: number }, idleShare: number): Promise<Slice> {
  const read = () => ({ relay: cpuTimes(pids.relay), upstream: cpuSeconds(pids.upstream), self: process.cpuUsage(), machine: machineBusySeconds(), at: performance.now() });
  const total = (times: { user: number; system: number }) => times.user + times.system;
  let start = read();
  let end = start;
  const sample = await closedLoop(target, sessions, SECONDS / ROUNDS, WARMUP_SECONDS, (edge) => {
    if (edge === 'start') start = read();
    else end = read();
  });
  await settle(pids.relay);
  const settled = read();
  const afterSeconds = (settled.at - end.at) / 1000;
  const relayAfter = Math.max(0, total(settled.relay) - total(end.relay) - idleShare * afterSeconds);
  return {
    ...sample,
    cpu: {
      relay: total(end.relay) - total(start.relay) + relayAfter,
      relaySystem: end.relay.system - start.relay.system,
      relayAfter,
      upstream: end.upstream - start.upstream,
      loadGenerator: (end.self.user + end.self.system - (start.self.user + start.self.system)) / 1e6,
      machine: end.machine - start.machine,
    },
  };
}

/** What the platform spends when no call arrives (bus consumers polling, timers), as a share of a core. */
async function idleShareOf(pid: number[]): Promise<number> {
  await settle(pid);
  const from = cpuSeconds(pid);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  return (cpuSeconds(pid) - from) / 2;
}

async function main(): Promise<void> {
  const infrastructure = await realInfrastructure('mcp-bench');
  const processes = new Map<Mode, ModeProcesses>();
  let platformProcess: Awaited<ReturnType<typeof startPlatformProcess>> | undefined;
  try {
    for (const mode of MODES) {
      const upstream = await startHelper('mcp-upstream-process.ts', [mode, ...(mode === 'json' ? ['--json'] : [])]);
      processes.set(mode, { upstream, ...(FLOOR ? { proxy: await startHelper('bare-proxy-process.ts', [upstream.url]) } : {}) });
    }
    platformProcess = await startPlatformProcess({ ...infrastructure.env, MCP_PUBLISH_POLICY: 'self_publish', ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' });
    const platformPids = platformProcess.pids;
    log('platform ready; setting up');
    const platform = { url: (p: string) => `${platformProcess!.url}${p}`, origin: platformProcess.origin, appUrl: platformProcess.url } as TestPlatform;
    const targets = await setUp(platform, processes);
    const idleShare = await idleShareOf(platformPids);
    log(`set up; platform idle: ${(100 * idleShare).toFixed(1)} % of a core; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);

    const sides: Side[] = FLOOR ? ['direct', 'gateway', 'proxy'] : ['direct', 'gateway'];
    const cases: Case[] = [];
    for (const mode of MODES) {
      const { upstream, proxy } = processes.get(mode)!;
      for (const sessions of SESSIONS) {
        const current: Case = { mode, sessions, slices: { direct: [], gateway: [], proxy: [] } };
        for (let round = 0; round < ROUNDS; round++) {
          // Each round starts with the side the previous one ended with, so no side always runs first.
          const order = round % 2 === 0 ? sides : [...sides].reverse();
          for (const side of order) {
            log(`${mode} ${side} x${sessions}`);
            const relay: { pid: number | number[]; idle: number } = side === 'proxy' ? { pid: proxy!.pid, idle: 0 } : { pid: platformPids, idle: idleShare };
            const slice = await runSlice(targets.get(mode)![side]!, sessions, { relay: relay.pid, upstream: upstream.pid }, relay.idle);
            if (slice.firstError) log(`${mode} ${side} x${sessions}: ${slice.errors} failed calls, first: ${slice.firstError}`);
            current.slices[side].push(slice);
          }
        }
        cases.push(current);
        const [d, g] = [summarise(current.slices.direct), summarise(current.slices.gateway)];
        log(`${mode} x${sessions}: direct ${Math.round(d.perSecond)}/s p50 ${ms(d.p50)}; gateway ${Math.round(g.perSecond)}/s p50 ${ms(g.p50)}, platform ${ms(g.relayMs)} ms CPU/call`);
      }
    }
    process.stdout.write(`\nload average at the end (1, 5, 15 min): ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n\n`);
    printResults(cases);
  } finally {
    await platformProcess?.stop();
    await Promise.allSettled([...processes.values()].flatMap(({ upstream, proxy }) => [upstream.stop(), proxy?.stop()]));
    await infrastructure.cleanup();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
