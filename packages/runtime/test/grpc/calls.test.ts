import { ProbeServiceClient } from '@platform/proto/gen/platform/testing/v1/testing';
import { AppError } from '../../src/errors/app-error';
import { authGenerationOf, bumpAuthGeneration } from '../../src/cache/auth-generation';
import { announceCatalogChange, catalogGenerationOf } from '../../src/cache/catalog-generation';
import { createMemoryCache } from '../../src/cache/memory-cache';
import { createGrpcClient } from '../../src/grpc/client';
import { MAX_MESSAGE_BYTES } from '../../src/grpc/local-channel';
import type { GrpcServer } from '../../src/grpc/server';
import type { GrpcCallContext } from '../../src/grpc/types';
import { withLogContext, currentLogContext } from '../../src/logging/logger';
import { gate, memoryLogger, startProbeServer, STATUS } from './fixtures';

// Every behaviour holds the same over the wire and through the server's local channel (same process, no socket).
describe.each(['wire', 'local channel'] as const)('GrpcServer and createGrpcClient (%s)', (channel) => {
  let server: GrpcServer;
  let address: string;
  let client: ReturnType<typeof createGrpcClient<ProbeServiceClient>>;
  let behaviour: (context: GrpcCallContext) => Promise<typeof STATUS>;
  const seen: Array<{ requestId: string | undefined; logRequestId: string | undefined }> = [];
  const log = memoryLogger();

  beforeAll(async () => {
    const started = await startProbeServer(
      async (_request, context) => {
        seen.push({ requestId: context.requestId, logRequestId: currentLogContext()?.requestId });
        return behaviour(context);
      },
      { logger: log.logger },
    );
    server = started.server;
    address = started.address;
    client = createGrpcClient(ProbeServiceClient, channel === 'wire' ? started.address : server.localChannel(), { deadlineMs: 2_000 });
  });

  afterAll(async () => {
    client.close();
    await server.stop(1_000);
  });

  it('returns the handler response, timestamps as ISO strings', async () => {
    behaviour = async () => STATUS;
    await expect(client.getServiceStatus({})).resolves.toEqual(STATUS);
  });

  it('carries an answer larger than grpc-js\'s default 4 MiB, up to MAX_MESSAGE_BYTES, and refuses a larger one as internal', async () => {
    // Its own client with a generous deadline: tens of MiB take a while on a loaded machine, and a deadline is not the subject.
    const patient = createGrpcClient(ProbeServiceClient, channel === 'wire' ? address : server.localChannel(), { deadlineMs: 30_000 });
    try {
      const large = 'x'.repeat(8 * 1024 * 1024);
      behaviour = async () => ({ ...STATUS, version: large });
      expect((await patient.getServiceStatus({})).version).toHaveLength(large.length);
      behaviour = async () => ({ ...STATUS, version: 'x'.repeat(MAX_MESSAGE_BYTES + 1) });
      const error = await patient.getServiceStatus({}).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AppError);
      // Not a rate limit (slow_down, 429): no retry would change it.
      expect((error as AppError).code).toBe('internal');
    } finally {
      patient.close();
    }
  }, 90_000);

  it('delivers an AppError to the caller with its code, message, fields and headers', async () => {
    behaviour = async () => {
      throw new AppError('in_use', 'The team still owns servers', {
        fields: [{ field: 'servers.0.prefix', problem: 'is used by « docs »' }],
        headers: { 'Retry-After': '30' },
      });
    };
    const error = await client.getServiceStatus({}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({
      code: 'in_use',
      message: 'The team still owns servers',
      fields: [{ field: 'servers.0.prefix', problem: 'is used by « docs »' }],
      headers: { 'Retry-After': '30' },
    });
  });

  it('turns an unexpected error into a generic internal error, logging the detail server-side only', async () => {
    behaviour = async () => {
      throw new Error('connection to db-7 refused: password=hunter2');
    };
    const error = (await client.getServiceStatus({}).catch((e: unknown) => e)) as AppError;
    expect(error).toBeInstanceOf(AppError);
    expect(error.code).toBe('internal');
    expect(error.message).toBe('Internal error');
    expect(JSON.stringify({ ...error, message: error.message })).not.toContain('db-7');
    expect(error.fields).toBeUndefined();

    const logged = log.lines.find((line) => line.msg === 'gRPC handler failed');
    expect(logged).toBeDefined();
    expect(JSON.stringify(logged)).toContain('connection to db-7 refused');
    expect((logged!.err as { stack?: string }).stack).toContain('calls.test.ts');
  });

  it('fails with deadline_exceeded when the handler outlives the deadline, aborting the handler signal', async () => {
    const aborted = gate();
    behaviour = (context) =>
      new Promise((_, reject) =>
        context.signal.addEventListener('abort', () => {
          aborted.open();
          reject(new Error('aborted'));
        }),
      );
    const error = (await client.getServiceStatus({}, { deadlineMs: 100 }).catch((e: unknown) => e)) as AppError;
    expect(error).toBeInstanceOf(AppError);
    expect(error.code).toBe('deadline_exceeded');
    await aborted.promise; // the handler learnt that nobody waits for it any more
  });

  it('leaves the signal of a call that was answered alone when its stream closes afterwards', async () => {
    const signals: AbortSignal[] = [];
    behaviour = async (context) => {
      signals.push(context.signal);
      return STATUS;
    };
    await expect(client.getServiceStatus({})).resolves.toEqual(STATUS);
    // grpc-js reports the stream's close after the answer as 'cancelled'; a handler's work is not cancelled by it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(false);
  });

  it("carries the caller's x-request-id into the handler's log context", async () => {
    behaviour = async () => STATUS;
    seen.length = 0;
    await withLogContext({ requestId: 'req-7f3a' }, () => client.getServiceStatus({}));
    await client.getServiceStatus({});
    expect(seen).toEqual([
      { requestId: 'req-7f3a', logRequestId: 'req-7f3a' },
      { requestId: undefined, logRequestId: undefined },
    ]);
  });

  it('tells the caller, with the answer, that the service moved the auth generation during the call, and only then', async () => {
    // The service's cache and the caller's are separate, as in two processes: only the answer can tell the caller.
    const serviceCache = createMemoryCache({ keyPrefix: 'service:' });
    const callerCache = createMemoryCache({ keyPrefix: 'caller:' });
    const view = authGenerationOf(callerCache);
    try {
      const settled = async () => {
        for (;;) {
          const generation = await view.current();
          if (generation?.startsWith('local:') && (await view.current()) === generation) return generation;
        }
      };
      const before = await settled();
      behaviour = async () => STATUS;
      await client.getServiceStatus({});
      expect(await view.current()).toBe(before);

      behaviour = async () => {
        await bumpAuthGeneration(serviceCache);
        return STATUS;
      };
      await client.getServiceStatus({});
      const afterChange = await view.current();
      expect(afterChange).not.toBe(before);

      behaviour = async () => {
        await bumpAuthGeneration(serviceCache);
        throw new AppError('conflict', 'changed, then refused');
      };
      await expect(client.getServiceStatus({})).rejects.toMatchObject({ code: 'conflict' });
      expect(await view.current()).not.toBe(afterChange);
    } finally {
      await Promise.all([serviceCache.close(), callerCache.close()]);
    }
  });

  it('names which generations moved: a catalog change moves the caller\'s catalog view and leaves its auth view', async () => {
    const serviceCache = createMemoryCache({ keyPrefix: 'service:' });
    const callerCache = createMemoryCache({ keyPrefix: 'caller:' });
    const auth = authGenerationOf(callerCache);
    const catalog = catalogGenerationOf(callerCache);
    try {
      const settled = async (view: typeof auth) => {
        for (;;) {
          const generation = await view.current();
          if (generation.startsWith('local:') && (await view.current()) === generation) return generation;
        }
      };
      const [authBefore, catalogBefore] = [await settled(auth), await settled(catalog)];

      behaviour = async () => {
        // Names a gateway: other processes forget just that one; the caller, which cannot tell, moves on entirely.
        await announceCatalogChange(serviceCache, ['3f7c2a9e-0d4b-4c1a-9a51-6f1e2b7d8c90']);
        return STATUS;
      };
      await client.getServiceStatus({});
      const catalogAfter = await catalog.current();
      expect(catalogAfter).not.toBe(catalogBefore);
      expect(await auth.current()).toBe(authBefore);

      behaviour = async () => {
        await announceCatalogChange(serviceCache);
        await bumpAuthGeneration(serviceCache);
        return STATUS;
      };
      await client.getServiceStatus({});
      const catalogThen = await catalog.current();
      expect(catalogThen).not.toBe(catalogAfter);
      expect(await auth.current()).not.toBe(authBefore);

      // The service's cache cannot be written (Redis down after the change was committed): the call fails, and the
      // caller still moves on, since only the answer can tell it.
      const unwritable = { ...serviceCache, set: () => Promise.reject(new Error('cache unreachable')) };
      behaviour = async () => {
        await announceCatalogChange(unwritable);
        return STATUS;
      };
      await expect(client.getServiceStatus({})).rejects.toMatchObject({ code: 'internal' });
      expect(await catalog.current()).not.toBe(catalogThen);
    } finally {
      await Promise.all([serviceCache.close(), callerCache.close()]);
    }
  });
});
