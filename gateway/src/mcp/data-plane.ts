import { setMaxListeners } from 'node:events';
import type { RuntimeServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { createGuardedDispatcher, parseAllowedNetworks, systemRequestContext, type SecretBox } from '@platform/runtime';
import type { Dispatcher } from 'undici';
import { BoundedMap } from '../bounded-map';
import { REFRESH_DEADLINE_MS } from '../catalog-limits';
import type { EdgeDeps } from '../edge-deps';
import type { McpPrincipal } from '../oauth/resource-server';
import { createCallRecorder } from './call-recorder';
import type { CallRecorder } from './call-record';
import { GatewayExposures, type ResolvedGateway } from './exposures';
import { createIdentityTokenSigner } from './identity-token';
import { InFlightRequests } from './in-flight';
import { LegacySseConnection, LegacySseConnections } from './legacy-sse';
import { PersonCounter } from './person-limits';
import type { McpSession } from './session';
import type { OpenedSession } from './session-check';
import { SessionLiveness } from './session-liveness';
import type { UpstreamEndpoint } from './upstream-client';
import { currentUpstreamSession, initializeUpstream, openedAtCurrentAddress, UpstreamSessionOverrides } from './upstream-sessions';

/** Settings of the `/mcp/{slug}` data plane (from the environment; see README). */
export interface McpSettings {
  /** Origins (scheme://host[:port]) besides APP_URL's own that may call from a browser. */
  allowedOrigins: readonly string[];
  sessionMaxAgeSeconds: number;
  /** Largest client or upstream message accepted. */
  maxMessageBytes: number;
  /** Longest one forwarded request may take in all, however active its upstream stays (MCP's maximum timeout). */
  maxExchangeSeconds: number;
  /** Most requests one person may have in flight on this replica (person-limits.ts). */
  maxRequestsPerPerson: number;
  /** Most GET streams one person may hold open on this replica. */
  maxGetStreamsPerPerson: number;
  /** CIDRs of internal networks upstreams may live in (the address guard's ALLOWED_INTERNAL_NETWORKS). */
  allowedInternalNetworks: string;
}

export const DEFAULT_MCP_SETTINGS: McpSettings = {
  allowedOrigins: [],
  sessionMaxAgeSeconds: 24 * 3600,
  maxMessageBytes: 4 * 1024 * 1024,
  maxExchangeSeconds: 3600,
  maxRequestsPerPerson: 256,
  maxGetStreamsPerPerson: 32,
  allowedInternalNetworks: '',
};

/** Everything the data plane's handlers share, made once per edge. */
export interface DataPlane {
  deps: EdgeDeps;
  settings: McpSettings;
  box: SecretBox;
  dispatcher: Dispatcher;
  exposures: GatewayExposures;
  overrides: UpstreamSessionOverrides;
  liveness: SessionLiveness;
  inFlight: InFlightRequests;
  /** What each person holds on this replica, against the settings' caps. */
  perPerson: { requests: PersonCounter; relays: PersonCounter; streams: PersonCounter };
  recorder: CallRecorder;
  tokens: ReturnType<typeof createIdentityTokenSigner>;
  /** Sessions this replica opened recently, by id (bounded). */
  openedSessions: BoundedMap<string, OpenedSession>;
  /** Local single flight of upstream initializations, by session key and server. */
  initializing: Map<string, Promise<UpstreamEndpoint>>;
  /** This replica's connections to upstreams on the legacy HTTP+SSE transport. */
  legacy: LegacySseConnections;
  /** Asks the catalog to re-discover a server that said its lists changed (debounced per server). */
  refreshSoon(server: RuntimeServer): void;
  /**
   * Aborted once the edge's listener began draining (`drain`): open GET streams end at once and new ones are refused,
   * so a stream a client keeps open does not hold the edge's stop for the whole drain grace.
   */
  draining: AbortSignal;
  drain(): void;
  close(): Promise<void>;
}

/** One client request's view: who, through which gateway, in which session. */
export interface CallContext {
  plane: DataPlane;
  principal: McpPrincipal;
  resolved: ResolvedGateway;
  session: McpSession;
  sessionKey: string;
}

const REFRESH_DEBOUNCE_MS = 5_000;

export function createDataPlane(deps: EdgeDeps): DataPlane {
  const settings = deps.settings.mcp ?? DEFAULT_MCP_SETTINGS;
  if (!deps.secrets) throw new Error('the /mcp data plane needs the secrets module (sealed session ids)');
  const logger = deps.logger.child({ module: 'mcp' });
  const maxAgeMs = settings.sessionMaxAgeSeconds * 1000;
  const dispatcher = createGuardedDispatcher({ allowedNetworks: parseAllowedNetworks(settings.allowedInternalNetworks) });
  const exposures = new GatewayExposures(deps.clients, logger, deps.cache);
  const liveness = new SessionLiveness(deps.cache, logger, maxAgeMs);
  const inFlight = new InFlightRequests(deps.cache);
  const recorder = createCallRecorder(deps);
  const refreshTimers = new Map<string, NodeJS.Timeout>();
  const draining = new AbortController();
  // Every open GET stream listens for the drain (and forgets it when it ends): thousands on a busy replica are normal,
  // not the leak Node's warning at 11 listeners guesses at.
  setMaxListeners(Infinity, draining.signal);

  const listening = Promise.all([liveness.listen(), inFlight.listen()]).catch((error: unknown) => {
    logger.error({ err: error }, 'the MCP data plane could not subscribe to session signals; relying on expiry');
  });

  const plane: DataPlane = {
    deps,
    settings,
    box: deps.secrets.secretBox,
    dispatcher,
    exposures,
    overrides: new UpstreamSessionOverrides(deps.cache, maxAgeMs),
    liveness,
    inFlight,
    perPerson: {
      requests: new PersonCounter(settings.maxRequestsPerPerson, 'requests in flight'),
      relays: new PersonCounter(settings.maxRequestsPerPerson, 'messages being relayed upstream'),
      streams: new PersonCounter(settings.maxGetStreamsPerPerson, 'open GET streams'),
    },
    recorder,
    tokens: createIdentityTokenSigner(deps),
    openedSessions: new BoundedMap(10_000),
    initializing: new Map(),
    legacy: new LegacySseConnections(),
    refreshSoon(server) {
      if (refreshTimers.has(server.id)) return;
      const timer = setTimeout(() => {
        refreshTimers.delete(server.id);
        deps.clients.catalog
          .refreshMcpServer(
            { context: systemRequestContext('mcp_gateway', server.slug), teamId: server.teamId, serverId: server.id },
            { deadlineMs: REFRESH_DEADLINE_MS },
          )
          .catch((error: unknown) => logger.warn({ err: error, serverId: server.id }, 'refresh after an upstream list change failed'));
      }, REFRESH_DEBOUNCE_MS);
      timer.unref();
      refreshTimers.set(server.id, timer);
    },
    draining: draining.signal,
    drain() {
      draining.abort();
    },
    async close() {
      draining.abort();
      for (const timer of refreshTimers.values()) clearTimeout(timer);
      await listening;
      exposures.close();
      await Promise.allSettled([liveness.close(), inFlight.close(), recorder.flush(), plane.legacy.close()]);
      await dispatcher.close();
    },
  };
  return plane;
}

/** The headers sent to an upstream: its static ones, and the person's identity token when the server asks for it. */
export async function upstreamHeaders(ctx: Pick<CallContext, 'plane' | 'principal' | 'resolved'>, server: RuntimeServer): Promise<Record<string, string>> {
  // Static headers as they are (read-only here); with sendIdentity, the identity token replaces any Authorization.
  if (!server.sendIdentity) return server.headers;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(server.headers)) if (name.toLowerCase() !== 'authorization') headers[name] = value;
  const gateway = ctx.resolved.exposure.runtime.gateway!;
  const token = await ctx.plane.tokens.tokenFor({
    person: { id: ctx.principal.personId, email: ctx.principal.email, displayName: ctx.principal.displayName },
    team: { id: gateway.teamId, slug: ctx.resolved.teamSlug },
    gateway: { id: gateway.id, slug: gateway.slug },
    server: { id: server.id, url: server.url, teamId: server.teamId },
  });
  headers.authorization = `Bearer ${token}`;
  return headers;
}

/**
 * Where to send this session's messages for a server: its current upstream session, opened now (and shared with the
 * other replicas) when the client's `initialize` could not open it. `stale` is an upstream session the upstream just
 * said it no longer knows.
 */
export async function endpointFor(ctx: CallContext, server: RuntimeServer, stale?: UpstreamEndpoint): Promise<UpstreamEndpoint> {
  const { plane, session, sessionKey } = ctx;
  const headers = await upstreamHeaders(ctx, server);
  if (server.transport === 'sse') {
    const options = { dispatcher: plane.dispatcher, maxMessageBytes: plane.settings.maxMessageBytes, timeoutSeconds: server.timeoutSeconds };
    const legacy = await plane.legacy.connectionFor(sessionKey, server, () => LegacySseConnection.open(server, headers, session, options));
    return { serverSlug: server.slug, url: server.url, headers, sessionId: '', protocolVersion: legacy.protocolVersion, legacy };
  }
  const endpoint = (sessionId: string, protocolVersion: string): UpstreamEndpoint => ({ serverSlug: server.slug, url: server.url, headers, sessionId, protocolVersion });
  if (!stale) {
    const current = currentUpstreamSession(plane.overrides, session, sessionKey, server);
    if (current) return endpoint(current.sessionId, current.protocolVersion);
  }
  const shared = await plane.overrides.shared(sessionKey, server.id);
  if (openedAtCurrentAddress(shared, server) && shared.sessionId !== stale?.sessionId) return endpoint(shared.sessionId, shared.protocolVersion);

  const flightKey = `${sessionKey}:${server.id}`;
  let pending = plane.initializing.get(flightKey);
  if (!pending) {
    pending = (async () => {
      const opened = await initializeUpstream(server, headers, session, { dispatcher: plane.dispatcher, maxMessageBytes: plane.settings.maxMessageBytes, timeoutSeconds: server.timeoutSeconds });
      await plane.overrides.store(sessionKey, server.id, opened);
      return endpoint(opened.sessionId, opened.protocolVersion);
    })().finally(() => plane.initializing.delete(flightKey));
    plane.initializing.set(flightKey, pending);
  }
  return pending;
}
