import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/logging';
import { gracefulClose, runReadinessChecks, startOpsServer, type OpsServer, type ReadinessCheck } from '../../src/http';

function silentLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: createLogger({ level: 'debug', destination }), lines };
}

const passing = (name: string): ReadinessCheck => ({ name, check: async () => undefined });
const failing = (name: string, message: string): ReadinessCheck => ({
  name,
  check: async () => {
    throw new Error(message);
  },
});

describe('runReadinessChecks', () => {
  it('reports ok when every check passes', async () => {
    const report = await runReadinessChecks([passing('database'), passing('cache')], 1_000);
    expect(report).toEqual({ status: 'ok', checks: { database: { ok: true }, cache: { ok: true } } });
  });

  it('names the failing check with a generic text, never the error message', async () => {
    const secretish = 'connect ECONNREFUSED postgres://admin:hunter2@db.internal:5432/platform';
    const report = await runReadinessChecks([passing('cache'), failing('database', secretish)], 1_000);
    expect(report.status).toBe('unavailable');
    expect(report.checks.cache).toEqual({ ok: true });
    expect(report.checks.database).toEqual({ ok: false, error: 'unavailable' });
    expect(JSON.stringify(report)).not.toContain('hunter2');
  });

  it('fails a check that does not answer within the timeout', async () => {
    const hanging: ReadinessCheck = { name: 'bus', check: () => new Promise(() => undefined) };
    const report = await runReadinessChecks([hanging, passing('database')], 50);
    expect(report.checks.bus).toEqual({ ok: false, error: 'timed out' });
    expect(report.checks.database).toEqual({ ok: true });
    expect(report.status).toBe('unavailable');
  });

  it('treats a check that throws synchronously like one that rejects', async () => {
    const throwing: ReadinessCheck = {
      name: 'broken',
      check: () => {
        throw new Error('boom');
      },
    };
    const report = await runReadinessChecks([throwing], 1_000);
    expect(report.checks.broken).toEqual({ ok: false, error: 'unavailable' });
  });

  it('runs the checks concurrently', async () => {
    const started: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const waitsForOther = (name: string): ReadinessCheck => ({
      name,
      check: async () => {
        started.push(name);
        if (started.length === 2) release();
        await gate; // would time out if the checks ran one after the other
      },
    });
    const report = await runReadinessChecks([waitsForOther('a'), waitsForOther('b')], 2_000);
    expect(report.status).toBe('ok');
  });
});

describe('runReadinessChecks: informational checks', () => {
  it('lists them under dependencies, where a failure leaves the status ok', async () => {
    const downstream = { ...failing('service:notifications', 'not serving'), informational: true };
    const report = await runReadinessChecks([passing('cache'), downstream], 1_000);
    expect(report).toEqual({
      status: 'ok',
      checks: { cache: { ok: true } },
      dependencies: { 'service:notifications': { ok: false, error: 'unavailable' } },
    });
  });
});

describe('gracefulClose', () => {
  /** A server whose answers wait until the test ends them; keep-alive as long as the edge's. */
  async function heldServer(): Promise<{ url: string; held: ServerResponse[]; arrived: Promise<void>; close: ReturnType<typeof gracefulClose> }> {
    const held: ServerResponse[] = [];
    let arrive!: () => void;
    const arrived = new Promise<void>((resolve) => (arrive = resolve));
    const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
      if (req.url === '/stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.flushHeaders();
      }
      held.push(res);
      if (held.length === 2) arrive();
    });
    const close = gracefulClose(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, held, arrived, close };
  }

  it('closes a keep-alive connection as soon as its answer, finished after the close began, is done', async () => {
    const { url, held, arrived, close } = await heldServer();
    const plain = fetch(`${url}/plain`);
    const stream = fetch(`${url}/stream`);
    await arrived;
    // A grace far longer than the test: the close must not wait for it, nor for the 65 s keep-alive.
    const closed = close(10 * 60_000);
    for (const res of held) res.end('done');
    const [plainResponse, streamResponse] = await Promise.all([plain, stream]);
    // The answer not yet begun tells the client not to reuse the connection.
    expect(plainResponse.headers.get('connection')).toBe('close');
    expect(await plainResponse.text()).toBe('done');
    expect(await streamResponse.text()).toBe('done');
    await closed;
  });
});

describe('startOpsServer', () => {
  let server: OpsServer;
  let ready = true;
  const { logger } = silentLogger();

  beforeAll(async () => {
    server = await startOpsServer({
      port: 0,
      host: '127.0.0.1',
      logger,
      readiness: () =>
        runReadinessChecks([ready ? passing('database') : failing('database', 'down'), { ...failing('service:billing', 'down'), informational: true }], 500),
    });
  });
  afterAll(() => server.close());

  const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;

  it('answers /healthz while the process lives', async () => {
    const response = await fetch(url('/healthz'));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
    expect(response.headers.get('x-powered-by')).toBeNull();
  });

  it('answers /readyz with 200 when ready and 503 with the failing check when not, listing informational ones apart', async () => {
    ready = true;
    const ok = await fetch(url('/readyz'));
    expect(ok.status).toBe(200);
    const dependencies = { 'service:billing': { ok: false, error: 'unavailable' } };
    expect(await ok.json()).toEqual({ status: 'ok', checks: { database: { ok: true } }, dependencies });

    ready = false;
    const down = await fetch(url('/readyz'));
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ status: 'unavailable', checks: { database: { ok: false, error: 'unavailable' } }, dependencies });
  });

  it('serves Prometheus metrics with the registry content type', async () => {
    const response = await fetch(url('/metrics'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    expect(text).toContain('# TYPE platform_http_request_duration_seconds histogram');
    expect(text).toContain('platform_process_cpu_user_seconds_total');
  });

  it('answers 404 for anything else', async () => {
    const response = await fetch(url('/v1/anything'));
    expect(response.status).toBe(404);
  });
});
