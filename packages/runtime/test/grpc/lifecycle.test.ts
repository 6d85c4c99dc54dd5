import { ProbeServiceClient } from '@platform/proto/gen/platform/testing/v1/testing';
import { AppError } from '../../src/errors/app-error';
import { createGrpcClient } from '../../src/grpc/client';
import { checkHealth } from '../../src/grpc/health';
import { gate, PROBE_SERVICE, startProbeServer, STATUS } from './fixtures';

describe('GrpcServer health and shutdown', () => {
  it('reports grpc.health.v1 status per service and overall, following setServing', async () => {
    const { server, address } = await startProbeServer(async () => STATUS);
    try {
      expect(await checkHealth(address)).toBe(true);
      expect(await checkHealth(address, PROBE_SERVICE)).toBe(true);
      expect(await checkHealth(address, 'platform.unknown.v1.NoService')).toBe(false);

      server.setServing(PROBE_SERVICE, false);
      expect(await checkHealth(address, PROBE_SERVICE)).toBe(false);
      expect(await checkHealth(address)).toBe(true);

      server.setServing(PROBE_SERVICE, true);
      expect(await checkHealth(address, PROBE_SERVICE, 1_000)).toBe(true);
    } finally {
      await server.stop(1_000);
    }
    expect(await checkHealth(address, '', 300)).toBe(false);
  });

  it.each(['wire', 'local channel'] as const)('lets an in-flight call finish on stop, then refuses new calls (%s)', async (channel) => {
    const handlerStarted = gate();
    const release = gate();
    const { server, address } = await startProbeServer(async () => {
      handlerStarted.open();
      await release.promise;
      return STATUS;
    });
    const client = createGrpcClient(ProbeServiceClient, channel === 'wire' ? address : server.localChannel(), { deadlineMs: 5_000 });
    try {
      const inFlight = client.getServiceStatus({});
      await handlerStarted.promise;

      let stopped = false;
      const stopping = server.stop(10_000).then(() => (stopped = true));
      expect(await checkHealth(address, PROBE_SERVICE)).toBe(false);
      expect(stopped).toBe(false);

      release.open();
      await expect(inFlight).resolves.toEqual(STATUS);
      await stopping;
      await expect(client.getServiceStatus({})).rejects.toBeInstanceOf(AppError);
    } finally {
      client.close();
    }
  });

  it.each(['wire', 'local channel'] as const)('cuts off a call still running when the grace period ends (%s)', async (channel) => {
    const handlerStarted = gate();
    const { server, address } = await startProbeServer((_request, context) => {
      handlerStarted.open();
      // Runs until the call is cut off.
      return new Promise((_, reject) => context.signal.addEventListener('abort', () => reject(new Error('cut off'))));
    });
    const client = createGrpcClient(ProbeServiceClient, channel === 'wire' ? address : server.localChannel(), { deadlineMs: 10_000 });
    try {
      const inFlight = client.getServiceStatus({}).catch((e: unknown) => e);
      await handlerStarted.promise;
      await server.stop(200);
      const error = (await inFlight) as AppError;
      expect(error).toBeInstanceOf(AppError);
      // grpc-js reports the cut-off stream as CANCELLED (the local channel too), which codeForGrpcStatus maps to `unavailable`.
      expect(error.code).toBe('unavailable');
      expect(error.message).toBe('Service unavailable');
    } finally {
      client.close();
    }
  });
});
