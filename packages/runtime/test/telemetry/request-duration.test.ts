import { Histogram, Registry } from 'prom-client';
import { RequestDurationHistogram } from '../../src/telemetry/request-duration';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const OBSERVATIONS: Array<[string, string, number, number]> = [
  ['POST', '/mcp/{slug}', 200, 0.0004],
  ['GET', '/v1/me', 200, 0.003],
  ['POST', '/mcp/{slug}', 200, 0.001], // on a bound: counted in that bucket
  ['POST', '/mcp/{slug}', 401, 0.02],
  ['GET', '/v1/teams/{team}/calls', 404, 7.5], // above every bound: only in +Inf
  ['POST', '/mcp/{slug}', 200, 0.25],
  ['GET', '/v1/me', 200, 0.0031],
  ['DELETE', '/oauth/token', 405, 0],
];

/** The same observations through prom-client's own Histogram and through RequestDurationHistogram. */
function both(): { theirs: Registry; ours: Registry; histogram: RequestDurationHistogram } {
  const theirs = new Registry();
  const reference = new Histogram({ name: 'd_seconds', help: 'Durations.', labelNames: ['method', 'route', 'status'], buckets: BUCKETS, registers: [theirs] });
  const ours = new Registry();
  const histogram = new RequestDurationHistogram({ name: 'd_seconds', help: 'Durations.', buckets: BUCKETS, registers: [ours] });
  for (const [method, route, status, seconds] of OBSERVATIONS) {
    reference.observe({ method, route, status: String(status) }, seconds);
    histogram.observe(method, route, status, seconds);
  }
  return { theirs, ours, histogram };
}

describe('RequestDurationHistogram', () => {
  it("gives /metrics the same text as prom-client's Histogram for the same observations", async () => {
    const { theirs, ours } = both();
    const expected = await theirs.metrics();
    expect(expected).toContain('d_seconds_bucket{le="+Inf",method="GET",route="/v1/teams/{team}/calls",status="404"} 1');
    expect(await ours.metrics()).toBe(expected);
  });

  it('takes other label names, for the same text as prom-client gives with them', async () => {
    const labelNames = ['method', 'outcome', 'error_class'] as const;
    const theirs = new Registry();
    const reference = new Histogram({ name: 'c_seconds', help: 'Calls.', labelNames, buckets: BUCKETS, registers: [theirs] });
    const ours = new Registry();
    const histogram = new RequestDurationHistogram({ name: 'c_seconds', help: 'Calls.', labelNames, buckets: BUCKETS, registers: [ours] });
    const calls: Array<[string, string, string, number]> = [
      ['tools/call', 'ok', '', 0.002],
      ['tools/call', 'error', 'tool_error', 0.01],
      ['other', 'error', 'method_not_found', 0.0001],
      ['tools/call', 'ok', '', 3],
    ];
    for (const [method, outcome, errorClass, seconds] of calls) {
      reference.observe({ method, outcome, error_class: errorClass }, seconds);
      histogram.observe(method, outcome, errorClass, seconds);
    }
    const expected = await theirs.metrics();
    expect(expected).toContain('c_seconds_count{method="tools/call",outcome="ok",error_class=""} 2');
    expect(await ours.metrics()).toBe(expected);
  });

  it('gives the same JSON form, and starts afresh when reset', async () => {
    const { theirs, ours, histogram } = both();
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
    histogram.reset();
    histogram.observe('GET', '/healthz', 200, 0.002);
    const text = await ours.metrics();
    expect(text).toContain('d_seconds_count{method="GET",route="/healthz",status="200"} 1');
    expect(text).not.toContain('/mcp/{slug}');
  });
});
