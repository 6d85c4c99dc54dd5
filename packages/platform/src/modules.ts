import {
  createMaintenanceWatcher,
  createCache,
  createDatabase,
  createEventBus,
  GrpcServer,
  loadSecrets,
  SERVICE_NAMES,
  startTelemetry,
  type Cache,
  type ModuleDefinition,
  type ServiceClients,
  type ServiceName,
} from '@platform/runtime';
import { gatewayModule } from './modules/gateway';
import { httpModule } from './modules/http';
import { clientsModule } from './modules/clients';
import { serviceModule, type RunningService } from './modules/service';
import { portInUseAsConfigError } from './modules/port-in-use';
import type { PlatformContext } from './context';
import { SERVICES } from './services';

/**
 * Every module of the platform and what it needs, in one place. A target (targets.ts) names modules; the
 * manager pulls in their dependencies, starts them in order and stops them in reverse.
 *
 *   telemetry, database, cache, bus, secrets      infrastructure ports (embedded or real adapters)
 *   identity … notifications                      the services: migrations, consumers, handlers
 *   relays                                        the services' outbox relays, once every consumer is subscribed
 *   grpc-server                                   hosts the services of this process on one gRPC port
 *   clients                                       gRPC clients of every service, local or remote
 *   maintenance                                   this process's view of maintenance mode (signal + re-read)
 *   gateway                                       the HTTP edge: /v1, OAuth, /mcp
 *   http                                          the ops listener on OPS_PORT (/healthz, /readyz, /metrics) in every
 *                                                 process; the edge's public listener on PORT where the gateway runs
 *                                                 (only /healthz of the ops endpoints there); the gRPC health of the
 *                                                 services hosted here following the readiness checks
 */
const infrastructure = ['telemetry', 'database', 'cache', 'bus', 'secrets'] as const;

/**
 * The process's `service.name` unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES name one: the name the chart
 * gives each target's pods (helm/platform/templates/_podspec.tpl), `mcp-platform-<target>`, `mcp-platform-all` for
 * the all-in-one process, so split targets run without the chart are told apart too. A comma list joins its targets.
 */
export function defaultServiceName(targets: readonly string[]): string {
  return `mcp-platform-${targets.join('-')}`;
}

export const MODULES: Record<string, ModuleDefinition<PlatformContext>> = {
  telemetry: {
    async start(ctx) {
      const telemetry = await startTelemetry({ serviceName: defaultServiceName(ctx.targets), logger: ctx.logger });
      return { stop: () => telemetry.shutdown() };
    },
  },
  database: {
    deps: ['telemetry'],
    async start(ctx) {
      const db = await createDatabase(ctx.config.storage, ctx.logger);
      ctx.readiness.push({ name: 'database', check: () => db.ping() });
      return { value: db, stop: () => db.close() };
    },
  },
  cache: {
    deps: ['telemetry'],
    async start(ctx) {
      const cache = await createCache(ctx.config.cache, ctx.logger);
      // Listed, never a reason to be unready, like the bus: Redis holds nothing a process needs to serve (signals,
      // counters, values that may be lost), and unready on it every pod would leave its Service at once
      // (docs/architecture.md, When a dependency fails).
      ctx.readiness.push({ name: 'cache', informational: true, check: () => cache.ping() });
      return { value: cache, stop: () => cache.close() };
    },
  },
  bus: {
    deps: ['telemetry'],
    async start(ctx) {
      const bus = await createEventBus(ctx.config.bus, ctx.logger);
      // Listed, never a reason to be unready: no process needs the bus to serve (docs/architecture.md, Health,
      // readiness and ops). Services' events wait in their outboxes, the edge's call records in its buffer.
      ctx.readiness.push({ name: 'bus', informational: true, check: () => bus.ping() });
      return { value: bus, stop: () => bus.close() };
    },
  },
  secrets: {
    async start(ctx) {
      const secrets = await loadSecrets({
        encryptionKey: ctx.config.env.ENCRYPTION_KEY,
        apiKeyPepper: ctx.config.env.API_KEY_PEPPER,
        dataDir: ctx.config.env.DATA_DIR,
        embedded: ctx.config.storage.kind === 'pglite',
        logger: ctx.logger,
      });
      return { value: secrets };
    },
  },
  ...Object.fromEntries(
    SERVICE_NAMES.map((name) => [
      name,
      serviceModule(SERVICES[name], { deps: [...infrastructure, 'clients'], with: ['relays', 'grpc-server', 'http', 'maintenance'] }),
    ]),
  ),
  relays: {
    after: SERVICE_NAMES,
    /**
     * Publishing starts once every service of the process has subscribed its consumers: the in-process bus hands a
     * message to the consumer groups present when it is published and marks nothing safe before they have handled
     * it. Stopping comes before the services': the batch in flight is handed over while its consumers still run.
     */
    async start(_ctx, running) {
      const relays = SERVICE_NAMES.filter((name) => running.has(name)).map((name) => running.get<RunningService>(name).relay);
      for (const relay of relays) relay.start();
      return { stop: () => Promise.all(relays.map((relay) => relay.stop())).then(() => undefined) };
    },
  },
  'grpc-server': {
    after: SERVICE_NAMES,
    async start(ctx, running) {
      const server = new GrpcServer({ host: ctx.config.grpc.host, port: ctx.config.grpc.port, logger: ctx.logger });
      for (const name of SERVICE_NAMES) {
        if (!running.has(name)) continue;
        const service = running.get<{ register(server: GrpcServer): void }>(name);
        service.register(server);
      }
      const port = await server.start().catch((error: unknown) => {
        throw portInUseAsConfigError(error, 'GRPC_PORT', ctx.config.grpc.port);
      });
      ctx.localGrpcAddress = `127.0.0.1:${port}`;
      ctx.localGrpcServer = server;
      ctx.logger.info({ host: ctx.config.grpc.host, port }, 'gRPC server listening');
      return { value: server, stop: () => server.stop(ctx.shutdownGraceMs) };
    },
  },
  clients: {
    async start(ctx) {
      return clientsModule(ctx);
    },
  },
  maintenance: {
    deps: ['cache', 'clients'],
    after: ['grpc-server'],
    async start(ctx, running) {
      const clients = running.get<ServiceClients>('clients');
      const watcher = createMaintenanceWatcher({
        cache: running.get<Cache>('cache'),
        fetch: () => clients.identity.getMaintenance({}),
        refreshMs: ctx.config.env.MAINTENANCE_REFRESH_SECONDS * 1000,
        logger: ctx.logger.child({ module: 'maintenance' }),
      });
      await watcher.start();
      return { value: watcher, stop: () => watcher.stop() };
    },
  },
  gateway: {
    deps: [...infrastructure, 'clients', 'maintenance'],
    with: ['http'],
    start: gatewayModule,
  },
  http: {
    after: ['gateway', 'grpc-server'],
    start: httpModule,
  },
};

/** Targets, as `--target` accepts them, and the modules each one runs. */
export const TARGETS: Record<string, readonly string[]> = {
  all: ['gateway', ...SERVICE_NAMES],
  gateway: ['gateway'],
  ...Object.fromEntries(SERVICE_NAMES.map((name) => [name, [name]])),
};

export type TargetName = 'all' | 'gateway' | ServiceName;
