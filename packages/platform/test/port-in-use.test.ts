import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '@platform/runtime';
import { freePort, startTestPlatform } from '@platform/test';

/**
 * A port already taken on the machine (8080 by another program, a second platform's 50051) stops the start with the
 * configuration error that names the variable to move, not the bare socket error.
 */
describe('starting on a port that is already in use', () => {
  let holder: Server;
  let taken: number;

  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, resolve));
    taken = (holder.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => holder.close(resolve));
  });

  it.each(['PORT', 'OPS_PORT', 'GRPC_PORT'])('names %s and tells to set it to a free port', async (variable) => {
    const started = startTestPlatform({ env: { [variable]: String(taken) } });
    const error = await started.then(
      async (platform) => {
        await platform.stop();
        return undefined;
      },
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      expect.stringMatching(new RegExp(`^${variable}: port ${taken} is already in use on this machine \\(.*EADDRINUSE.*\\); stop what holds it or set ${variable} to a free port$`)),
    ]);
  }, 120_000);

  it.each(['PORT', 'OPS_PORT'])('names %s when it is this process\'s own GRPC_PORT, not another program', async (variable) => {
    const port = String(await freePort());
    const error = await startTestPlatform({ env: { GRPC_PORT: port, [variable]: port } }).then(
      async (platform) => {
        await platform.stop();
        return undefined;
      },
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([`${variable}: must differ from GRPC_PORT (${port}), on which this process serves gRPC`]);
  }, 120_000);
});
