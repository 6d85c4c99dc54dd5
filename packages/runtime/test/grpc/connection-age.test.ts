import { ProbeServiceClient } from '@platform/proto/gen/platform/testing/v1/testing';
import { startTcpProxy } from '@platform/test';
import { createGrpcClient } from '../../src/grpc/client';
import { MAX_CONNECTION_AGE_GRACE_MS, MAX_CONNECTION_AGE_MS } from '../../src/grpc/server';
import { gate, startProbeServer, STATUS } from './fixtures';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('GrpcServer connection age (calls spread over replicas added later)', () => {
  it('tells a client to reconnect once its connection is old, letting calls in flight finish on the old one', async () => {
    let hold: Promise<void> | undefined;
    const { server, address } = await startProbeServer(
      async () => {
        await hold;
        return STATUS;
      },
      // Short enough for a test; the defaults are asserted below.
      { channelOptions: { 'grpc.max_connection_age_ms': 300, 'grpc.max_connection_age_grace_ms': 60_000 } },
    );
    // A relay in front of the server counts the connections the client opens (what a Kubernetes Service balances).
    const relay = await startTcpProxy({ host: '127.0.0.1', port: Number(address.split(':')[1]) });
    const client = createGrpcClient(ProbeServiceClient, `127.0.0.1:${relay.port}`, { deadlineMs: 10_000 });
    try {
      expect(await client.getServiceStatus({})).toMatchObject({ service: 'identity' });
      expect(relay.accepted()).toBe(1);
      // A call still running when the connection's age passes is not cut off.
      const held = gate();
      hold = held.promise;
      const running = client.getServiceStatus({});
      await sleep(1_000);
      held.open();
      hold = undefined;
      expect(await running).toMatchObject({ service: 'identity' });
      // The next calls go over a new connection, which a Service may send to another replica.
      for (let i = 0; i < 3; i++) expect(await client.getServiceStatus({})).toMatchObject({ service: 'identity' });
      expect(relay.accepted()).toBeGreaterThanOrEqual(2);
    } finally {
      client.close();
      await server.stop(1_000);
      await relay.close();
    }
  }, 30_000);

  it('defaults to about five minutes, with an hour for calls in flight (longer than any deadline the platform sets)', () => {
    expect(MAX_CONNECTION_AGE_MS).toBe(5 * 60 * 1000);
    expect(MAX_CONNECTION_AGE_GRACE_MS).toBeGreaterThan(50 * 60 * 1000);
  });
});
