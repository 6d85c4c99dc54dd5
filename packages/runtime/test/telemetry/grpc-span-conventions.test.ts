import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { installTestTracing, memoryLogger } from '@platform/test';
import { ProbeServiceClient } from '@platform/proto/gen/platform/testing/v1/testing';
import { AppError } from '../../src/errors/app-error';
import { createGrpcClient } from '../../src/grpc/client';
import { withSpan } from '../../src/telemetry/tracing';
import { startProbeServer, STATUS } from '../grpc/fixtures';

/**
 * The gRPC spans as the OpenTelemetry RPC conventions describe them: `rpc.system`, `rpc.service`, `rpc.method` and
 * `rpc.grpc.status_code` on both sides, `server.address` and `server.port` on the client's, an error status on the
 * client for every status but OK and on the server only for the server's own faults; nothing a handler's failure
 * says beyond what the caller is told; and the server's log lines of a call carry its trace and span ids.
 */
const { exporter, uninstall } = installTestTracing();
afterAll(uninstall);
beforeEach(() => exporter.reset());

const SECRET = 'postgres://app:hunter2-db-password@db:5432/platform';

const log = memoryLogger();

async function withProbe(answer: () => Promise<typeof STATUS>, test: (call: () => Promise<unknown>, port: number) => Promise<void>): Promise<void> {
  const { server, address } = await startProbeServer(answer, { logger: log.logger });
  const client = createGrpcClient(ProbeServiceClient, address, { deadlineMs: 2_000 });
  try {
    await test(() => withSpan('test-root', {}, () => client.getServiceStatus({})), Number(address.split(':')[1]));
  } finally {
    client.close();
    await server.stop(1_000);
  }
}

function spansOfCall() {
  const spans = exporter.getFinishedSpans();
  return { client: spans.find((s) => s.kind === SpanKind.CLIENT)!, server: spans.find((s) => s.kind === SpanKind.SERVER)! };
}

it('names the call and its peer on both sides, with the OK status code', async () => {
  await withProbe(async () => STATUS, async (call, port) => {
    await call();
    const { client, server } = spansOfCall();
    for (const span of [client, server]) {
      expect(span.name).toBe('platform.testing.v1.ProbeService/GetServiceStatus');
      expect(span.attributes).toMatchObject({ 'rpc.system': 'grpc', 'rpc.service': 'platform.testing.v1.ProbeService', 'rpc.method': 'GetServiceStatus', 'rpc.grpc.status_code': 0 });
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
    }
    expect(client.attributes['server.address']).toBe('127.0.0.1');
    expect(client.attributes['server.port']).toBe(port);
  });
});

it("marks a caller's mistake as an error on the client only", async () => {
  await withProbe(async () => { throw new AppError('not_found', 'No such team'); }, async (call) => {
    await expect(call()).rejects.toMatchObject({ code: 'not_found' });
    const { client, server } = spansOfCall();
    expect(client.attributes['rpc.grpc.status_code']).toBe(5);
    expect(server.attributes['rpc.grpc.status_code']).toBe(5);
    expect(client.status.code).toBe(SpanStatusCode.ERROR);
    expect(server.status.code).toBe(SpanStatusCode.UNSET);
  });
});

it("marks a handler's failure on both sides without recording what it said", async () => {
  await withProbe(async () => { throw new Error(`could not reach ${SECRET}`); }, async (call) => {
    await expect(call()).rejects.toMatchObject({ code: 'internal' });
    const { client, server } = spansOfCall();
    expect(client.attributes['rpc.grpc.status_code']).toBe(13);
    expect(server.attributes['rpc.grpc.status_code']).toBe(13);
    expect(client.status.code).toBe(SpanStatusCode.ERROR);
    expect(server.status.code).toBe(SpanStatusCode.ERROR);
    const recorded = JSON.stringify(exporter.getFinishedSpans().map((s) => ({ attributes: s.attributes, events: s.events, status: s.status })));
    expect(recorded).not.toContain('hunter2');
    // The operators' detail is in the log, on a line that leads to the trace.
    const line = log.lines.find((entry) => entry.msg === 'gRPC handler failed')!;
    expect(line).toMatchObject({ trace_id: server.spanContext().traceId, span_id: server.spanContext().spanId });
  });
});
