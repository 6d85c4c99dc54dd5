import { SpanKind } from '@opentelemetry/api';
import { installTestTracing } from '@platform/test';
import { ProbeServiceClient } from '@platform/proto/gen/platform/testing/v1/testing';
import { AppError } from '../../src/errors/app-error';
import { createGrpcClient } from '../../src/grpc/client';
import { currentTraceId, withSpan } from '../../src/telemetry/tracing';
import { startProbeServer, STATUS } from './fixtures';

describe('gRPC trace propagation', () => {
  const { exporter, uninstall } = installTestTracing();
  afterAll(uninstall);
  beforeEach(() => exporter.reset());

  it.each(['wire', 'local channel'] as const)("continues the caller's trace in a SERVER span whose parent is the CLIENT span (%s)", async (channel) => {
    let handlerTraceId: string | undefined;
    let fail = false;
    const { server, address } = await startProbeServer(async () => {
      handlerTraceId = currentTraceId();
      if (fail) throw new AppError('not_found', 'No such team');
      return STATUS;
    });
    const client = createGrpcClient(ProbeServiceClient, channel === 'wire' ? address : server.localChannel(), { deadlineMs: 2_000 });
    try {
      const rootTraceId = await withSpan('test-root', {}, async (span) => {
        await client.getServiceStatus({});
        return span.spanContext().traceId;
      });

      const spans = exporter.getFinishedSpans();
      const clientSpan = spans.find((s) => s.kind === SpanKind.CLIENT)!;
      const serverSpan = spans.find((s) => s.kind === SpanKind.SERVER)!;
      expect(clientSpan.name).toBe('platform.testing.v1.ProbeService/GetServiceStatus');
      expect(clientSpan.spanContext().traceId).toBe(rootTraceId);
      expect(serverSpan.spanContext().traceId).toBe(rootTraceId);
      expect(serverSpan.parentSpanContext?.spanId).toBe(clientSpan.spanContext().spanId);
      expect(handlerTraceId).toBe(rootTraceId);
      expect(serverSpan.attributes['rpc.grpc.status_code']).toBe(0);

      exporter.reset();
      fail = true;
      await expect(client.getServiceStatus({})).rejects.toMatchObject({ code: 'not_found' });
      const failed = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.SERVER)!;
      expect(failed.attributes['rpc.grpc.status_code']).toBe(5);
    } finally {
      client.close();
      await server.stop(1_000);
    }
  });
});
