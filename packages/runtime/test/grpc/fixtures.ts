import type { ChannelOptions } from '@grpc/grpc-js';
import { ProbeServiceService, type ProbeServiceServer } from '@platform/proto/gen/platform/testing/v1/testing';
import { freePort, memoryLogger } from '@platform/test';
import type { Logger } from '../../src/logging/logger';
import { GrpcServer } from '../../src/grpc/server';
import type { AsyncServiceImplementation } from '../../src/grpc/types';

export { freePort, memoryLogger };

export const PROBE_SERVICE = 'platform.testing.v1.ProbeService';

/** Starts a GrpcServer on 127.0.0.1 hosting ProbeService with the given handler. */
export async function startProbeServer(
  getServiceStatus: AsyncServiceImplementation<ProbeServiceServer>['getServiceStatus'],
  options: { port?: number; logger?: Logger; channelOptions?: ChannelOptions } = {},
): Promise<{ server: GrpcServer; address: string }> {
  const server = new GrpcServer({
    host: '127.0.0.1',
    port: options.port ?? 0,
    logger: options.logger ?? memoryLogger().logger,
    ...(options.channelOptions ? { channelOptions: options.channelOptions } : {}),
  });
  const implementation: AsyncServiceImplementation<ProbeServiceServer> = { getServiceStatus };
  server.addService(ProbeServiceService, implementation);
  const port = await server.start();
  return { server, address: `127.0.0.1:${port}` };
}

export const STATUS = { service: 'identity', version: '1.2.3', schemaVersion: '0003_users', startedAt: '2024-05-01T10:00:00.000Z' };


/** A promise with its resolver, for handlers that must wait until the test lets them finish. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
