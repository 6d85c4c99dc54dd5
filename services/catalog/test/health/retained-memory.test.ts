import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseAllowedNetworks } from '@platform/runtime';
import { answer, initializeResult, startRawUpstream, type RawUpstream } from '@platform/test';
import { discoverCapabilities } from '../../src/domain/discovery';
import { probeUpstream } from '../../src/domain/health';
import type { DiscoveryTarget } from '../../src/domain/upstream-exchange';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** The heap in use once everything unreachable is collected (a few passes, a turn of the event loop apart). */
async function heapInUse(): Promise<number> {
  for (let pass = 0; pass < 3; pass++) {
    collectGarbage();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return process.memoryUsage().heapUsed;
}

const WARM_UP = 200;
const RUNS_PER_WINDOW = 200;
/**
 * What a run may appear to keep on average, in the quieter of two windows: what warming up (code, pools, caches) and
 * the collector's timing leave. Each check and each discovery used to keep about 8 kB for the life of the process,
 * window after window: the signal AbortSignal.any made for it, which the SDK's per-request listener holds on to, kept
 * the SDK client, its transport and their closures (runtime first-abort.ts).
 */
const NOISE_BYTES_PER_RUN = 4_000;

/**
 * Health checks run every MCP_HEALTH_CHECK_SECONDS for every server, and scheduled discovery every MCP_REFRESH_SECONDS,
 * each under the signal of its background task, which lives as long as the process: nothing of a finished exchange
 * with an upstream may stay reachable, or a catalog replica grows by what each one leaves for as long as it runs.
 */
describe('what an exchange with an upstream leaves behind', () => {
  // A background task's stop signal: never aborted while the process runs.
  const task = new AbortController();
  let upstream: RawUpstream;
  let target: DiscoveryTarget;

  beforeAll(async () => {
    // Canned answers over raw node:http, keeping nothing, so that only the client side shows in the heap: an SDK server
    // per request (stateless) keeps nothing either, but building one (its schema validator) cost about a third of
    // each discovery's time, in this process, 600 times a test.
    upstream = await startRawUpstream((message, res) => {
      if (message?.id === undefined) return false;
      if (message.method === 'initialize') answer(res, message.id, initializeResult({ tools: {}, prompts: {} }));
      else if (message.method === 'ping') answer(res, message.id, {});
      else if (message.method === 'tools/list') answer(res, message.id, { tools: [{ name: 'echo', description: 'Echo', inputSchema: { type: 'object' } }] });
      else if (message.method === 'prompts/list') answer(res, message.id, { prompts: [{ name: 'summarise', description: 'Summarise' }] });
      else return false;
      return true;
    });
    target = { url: upstream.url, transport: 'streamable-http', headers: {}, timeoutSeconds: 10, allowedNetworks: parseAllowedNetworks('127.0.0.0/8') };
  });
  afterAll(async () => {
    await upstream?.close();
  });

  /**
   * The heap a run leaves reachable, on average over a window of runs once warmed up: the smaller of two consecutive
   * windows, since a leak grows the heap in every window while the tail of warming up shows in the first only.
   */
  async function keptPerRun(run: () => Promise<void>): Promise<number> {
    for (let index = 0; index < WARM_UP; index++) await run();
    const windows: number[] = [];
    for (let window = 0; window < 2; window++) {
      const before = await heapInUse();
      for (let index = 0; index < RUNS_PER_WINDOW; index++) await run();
      windows.push(((await heapInUse()) - before) / RUNS_PER_WINDOW);
    }
    return Math.min(...windows);
  }

  it('a health check keeps nothing once it ended', async () => {
    const kept = await keptPerRun(async () => {
      const outcome = await probeUpstream(target, task.signal);
      if (outcome?.status !== 'healthy') throw new Error(`the check found the upstream ${outcome?.status}`);
    });
    expect(kept).toBeLessThan(NOISE_BYTES_PER_RUN);
  }, 180_000);

  it('a discovery keeps nothing once it ended', async () => {
    const kept = await keptPerRun(async () => {
      const found = await discoverCapabilities(target, task.signal);
      if (found.length !== 2) throw new Error(`discovery found ${found.length} capabilities`);
    });
    expect(kept).toBeLessThan(NOISE_BYTES_PER_RUN);
  }, 180_000);
});
