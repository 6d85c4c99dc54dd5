import { getMaxListeners } from 'node:events';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import {
  eventually,
  gatewayFronting,
  rawMcpSession,
  startMcpUpstream,
  startTestPlatform,
  type FrontedGateway,
  type McpUpstream,
  type TestPlatform,
} from '@platform/test';
import { closeSignalOf } from '../../src/mcp/stream';

/** More than Node's default of 10 listeners per emitter, which it reports as a likely leak. */
const UPSTREAMS = 11;
const STREAMS = 12;

/**
 * A replica holds many GET streams, each relaying every upstream of its gateway: the signals they share (the edge's
 * drain, a stream's close) have a listener per stream or per upstream. That is the design, not a leak, and Node's
 * MaxListenersExceededWarning (printed past 10) would tell operators otherwise in their logs. Jest's sandbox has a
 * process object of its own, so the warning itself cannot be heard here: the close signal's setting is checked
 * instead, and the streams are checked to work.
 */
describe('MCP gateway data plane: many GET streams of a gateway with many upstreams', () => {
  let platform: TestPlatform;
  let upstreams: McpUpstream[];
  let gateway: FrontedGateway;

  beforeAll(async () => {
    upstreams = await Promise.all(Array.from({ length: UPSTREAMS }, (_, n) => startMcpUpstream({ name: `u${n}` })));
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    gateway = await gatewayFronting(platform, 'many', upstreams.map((upstream, n) => ({ slug: `u${n}`, url: upstream.url })));
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await Promise.all((upstreams ?? []).map((upstream) => upstream.close()));
  });

  it('relays every upstream to every client stream', async () => {
    const stop = new AbortController();
    try {
      const sessions = await Promise.all(Array.from({ length: STREAMS }, () => rawMcpSession(platform, gateway)));
      const streams = await Promise.all(
        sessions.map((session) =>
          fetch(platform.url(`/mcp/${gateway.gatewaySlug}`), {
            headers: { authorization: `Bearer ${gateway.token}`, accept: 'text/event-stream', 'mcp-session-id': session },
            signal: stop.signal,
          }),
        ),
      );
      expect(streams.map((stream) => stream.status)).toEqual(Array(STREAMS).fill(200));
      const open = await eventually(
        async () => upstreams.map((upstream) => upstream.gets.filter((get) => get.open && get.status === 200).length),
        (counts) => counts.every((count) => count === STREAMS),
      );
      expect(open).toEqual(Array(UPSTREAMS).fill(STREAMS));
    } finally {
      stop.abort();
    }
  }, 60_000);

  it('lets a client stream\'s close signal take a listener per upstream without a leak warning', () => {
    const res = new ServerResponse(new IncomingMessage(new Socket()));
    expect(getMaxListeners(closeSignalOf(res))).toBe(Infinity);
  });
});
