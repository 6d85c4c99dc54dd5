import { ProbeServiceClient } from '@platform/proto/gen/platform/testing/v1/testing';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../../src/errors/app-error';
import { createGrpcClient } from '../../src/grpc/client';
import type { GrpcServer } from '../../src/grpc/server';
import { freePort, startProbeServer, STATUS } from './fixtures';

describe('createGrpcClient retries', () => {
  const servers: GrpcServer[] = [];
  const clients: Array<{ close(): void }> = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    for (const server of servers.splice(0)) await server.stop(500);
  });

  it('retries an idempotent method until a server that starts late answers, within the deadline', async () => {
    const port = await freePort();
    // Enough attempts that only the deadline bounds the retries, however slowly the server comes up.
    const client = createGrpcClient(ProbeServiceClient, `127.0.0.1:${port}`, {
      deadlineMs: 5_000,
      idempotentMethods: ['getServiceStatus'],
      maxAttempts: 20,
    });
    clients.push(client);
    let calls = 0;
    const call = client.getServiceStatus({});
    await sleep(150); // the first attempt has been refused by now
    const { server } = await startProbeServer(
      async () => {
        calls++;
        return STATUS;
      },
      { port },
    );
    servers.push(server);
    await expect(call).resolves.toEqual(STATUS);
    expect(calls).toBe(1);
  });

  it('fails a non-idempotent method at once when no server answers', async () => {
    const port = await freePort();
    const client = createGrpcClient(ProbeServiceClient, `127.0.0.1:${port}`, { deadlineMs: 5_000 });
    clients.push(client);
    const call = client.getServiceStatus({});
    // The server starts while the call could still be retried; it must not be.
    const error = await call.catch((e: unknown) => e);
    const { server } = await startProbeServer(async () => STATUS, { port });
    servers.push(server);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('unavailable');
    expect((error as AppError).message).toBe('Service unavailable');
  });

  it('repeats an idempotent call the server answered UNAVAILABLE, but never a non-idempotent one', async () => {
    let calls = 0;
    const { server, address } = await startProbeServer(async () => {
      calls++;
      if (calls % 3 !== 0) throw new AppError('unavailable', 'Database connection lost');
      return STATUS;
    });
    servers.push(server);

    const idempotent = createGrpcClient(ProbeServiceClient, address, { deadlineMs: 5_000, idempotentMethods: ['getServiceStatus'] });
    const once = createGrpcClient(ProbeServiceClient, address, { deadlineMs: 5_000 });
    clients.push(idempotent, once);

    await expect(idempotent.getServiceStatus({})).resolves.toEqual(STATUS);
    expect(calls).toBe(3);

    calls = 0;
    await expect(once.getServiceStatus({})).rejects.toMatchObject({ code: 'unavailable', message: 'Database connection lost' });
    expect(calls).toBe(1);
  });

  it('does not retry a maintenance refusal, and gives up after maxAttempts', async () => {
    let calls = 0;
    let code: 'maintenance' | 'unavailable' = 'maintenance';
    const { server, address } = await startProbeServer(async () => {
      calls++;
      throw new AppError(code, 'Not now');
    });
    servers.push(server);
    const client = createGrpcClient(ProbeServiceClient, address, { deadlineMs: 5_000, idempotentMethods: ['getServiceStatus'], maxAttempts: 3 });
    clients.push(client);

    await expect(client.getServiceStatus({})).rejects.toMatchObject({ code: 'maintenance' });
    expect(calls).toBe(1);

    calls = 0;
    code = 'unavailable';
    await expect(client.getServiceStatus({})).rejects.toMatchObject({ code: 'unavailable' });
    expect(calls).toBe(3);
  });
});
