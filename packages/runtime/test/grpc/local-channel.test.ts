import { Metadata } from '@grpc/grpc-js';
import { ProbeServiceClient, ProbeServiceService } from '@platform/proto/gen/platform/testing/v1/testing';
import { AppError } from '../../src/errors/app-error';
import { createGrpcClient } from '../../src/grpc/client';
import { MAX_MESSAGE_BYTES } from '../../src/grpc/local-channel';
import { startProbeServer, STATUS } from './fixtures';

// What only the local channel needs saying; everything a call does is tested on both channels in calls.test.ts,
// tracing.test.ts and lifecycle.test.ts.
describe('GrpcServer.localChannel', () => {
  it('hands the handler its own copy of the request and the caller its own copy of the answer', async () => {
    const answer = { ...STATUS };
    let received: unknown;
    const request = {};
    const { server } = await startProbeServer(async (req) => {
      received = req;
      return answer;
    });
    const client = createGrpcClient(ProbeServiceClient, server.localChannel(), { deadlineMs: 2_000 });
    try {
      const response = await client.getServiceStatus(request);
      expect(response).toEqual(STATUS);
      expect(response).not.toBe(answer);
      expect(received).not.toBe(request);
    } finally {
      client.close();
      await server.stop(1_000);
    }
  });

  it('refuses an answer larger than a gRPC message may be, as the wire does', async () => {
    const { server } = await startProbeServer(async () => ({ ...STATUS, version: 'x'.repeat(MAX_MESSAGE_BYTES + 1) }));
    const client = createGrpcClient(ProbeServiceClient, server.localChannel(), { deadlineMs: 2_000 });
    try {
      const error = (await client.getServiceStatus({}).catch((e: unknown) => e)) as AppError;
      expect(error).toBeInstanceOf(AppError);
      // Not a rate limit: no retry would change it.
      expect(error.code).toBe('internal');
    } finally {
      client.close();
      await server.stop(1_000);
    }
  });

  it('answers UNIMPLEMENTED for a method the server does not host, and refuses calls once closed', async () => {
    const { server } = await startProbeServer(async () => STATUS);
    const channel = server.localChannel();
    const path = ProbeServiceService.getServiceStatus.path;
    const call = (at: string) =>
      new Promise<{ code: number }>((resolve) =>
        channel.makeUnaryRequest(
          at,
          ProbeServiceService.getServiceStatus.requestSerialize,
          ProbeServiceService.getServiceStatus.responseDeserialize,
          {},
          new Metadata(),
          { deadline: Date.now() + 1_000 },
          (error) => resolve({ code: error ? error.code : 0 }),
        ),
      );
    try {
      expect(await call(path)).toEqual({ code: 0 });
      expect(await call('/platform.testing.v1.ProbeService/NoSuchMethod')).toEqual({ code: 12 });
      channel.close();
      expect(await call(path)).toEqual({ code: 1 });
    } finally {
      await server.stop(1_000);
    }
  });
});
